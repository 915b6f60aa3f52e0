"""Escape probes of rules that would skip the classifier: every prefix rule Kgent proposes (or a person writes) for a
program with options that run another program — `rg`, `git grep`, `git fetch` / `pull` / `clone` / `ls-remote`,
`git log` / `diff` / `show`, `git rebase`, `sort`, `rsync`, `git` itself — held in the user's rules and a trusted
project's, against each such option, in plan, ask, auto and risk_based with the bubblewrap sandbox (where this
machine has it), every approval rejected.

The repository's `x.sh` leaves a file behind when anything runs it: none may. In ask and auto every probe is asked
(no rule covers it, and the card says why); plan and risk_based refuse them. The rules still cover the plain
commands (the suite is not vacuous).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from escapes import MODES, drive, git, report
from kgent.core.paths import trust_file
from kgent.sandbox.bwrap import detect

RULES = [
    "bash(rg *)",
    "bash(git grep *)",
    "bash(git fetch *)",
    "bash(git pull *)",
    "bash(git clone *)",
    "bash(git ls-remote *)",
    "bash(git log *)",
    "bash(git diff *)",
    "bash(git show *)",
    "bash(git rebase *)",
    "bash(git archive *)",
    "bash(git push *)",
    "bash(sort *)",
    "bash(rsync *)",
    "bash(git *)",
]
PROBES = [
    "rg --pre ./x.sh a",
    "rg --pre=./x.sh a",
    "rg -n --pre ./x.sh a .",
    "git grep -O./x.sh a",
    "git grep -nO./x.sh a",
    "git grep --open-files-in-pager=./x.sh a",
    "git grep --open=./x.sh a",
    "git fetch --upload-pack=./x.sh .",
    "git fetch --upload-pack ./x.sh .",
    "git fetch --upl=./x.sh .",
    "git pull --upload-pack=./x.sh .",
    "git ls-remote --upload-pack=./x.sh .",
    "git clone -u ./x.sh . c1",
    "git clone --upload-pack=./x.sh . c2",
    "git clone --config core.pager=./x.sh . c3",
    "git clone --template=tpl . c4",
    "git archive --exec=./x.sh --remote=. HEAD",
    "git push --receive-pack=./x.sh . HEAD:refs/heads/x",
    "git -c core.pager=./x.sh log",
    "git -c core.fsmonitor=./x.sh status",
    "git -ccore.pager=./x.sh log -p",
    "git --config-env=core.pager=PAGER log",
    "git -c alias.x=!./x.sh x",
    "git log --ext-diff -p",
    "git diff --ext-diff",
    "git show --ext-diff HEAD",
    "git log --textconv -p",
    "git rebase --exec ./x.sh HEAD~1",
    "git rebase -x ./x.sh HEAD~1",
    "git config core.pager ./x.sh",
    "git config alias.y !./x.sh",
    "sort --compress-program=./x.sh a",
    "sort --compress-prog=./x.sh a",
    "rsync -e ./x.sh a host:b",
    "rsync --rsh=./x.sh a host:b",
    "rsync --rsync-path=./x.sh a host:b",
    "rg a; git grep -O./x.sh a",
    "git log --oneline && git -c core.pager=./x.sh log",
]
COVERED = ["rg a", "git grep -n a", "git log --oneline", "sort a"]  # the rules still cover these
SANDBOX = detect()


def _world(root: Path, config_dir: Path) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True)
    git(ws, "init", "-q", ".")
    script = ws / "x.sh"
    script.write_text('#!/bin/sh\ntouch "$(dirname "$0")/RAN-$$"\ncat\n')
    script.chmod(0o755)
    (ws / "a").write_text("a\n")
    (ws / "tpl" / "hooks").mkdir(parents=True)
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    (ws / "b").write_text("b\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "second")
    rules = "\n".join(f"    {json.dumps(r)}," for r in RULES)
    text = f"[permissions]\nallow = [\n{rules}\n]\n"
    (config_dir / "config.toml").write_text(text)
    (ws / ".kgent").mkdir()
    (ws / ".kgent" / "config.toml").write_text(text)
    trust_file(None).write_text(json.dumps([str(ws.resolve())]))
    return ws


def _ran(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.rglob("RAN-*"))


def test_there_are_enough_probes() -> None:
    assert len(PROBES) >= 30 and len(set(PROBES)) == len(PROBES)


@pytest.mark.parametrize("mode", MODES)
async def test_no_rule_runs_a_program_unasked(tmp_path: Path, mode: str, _user_config_dir: str) -> None:
    ws = _world(tmp_path, Path(_user_config_dir))
    calls = [("bash", {"command": c}) for c in [*PROBES, *COVERED]]
    out = await drive(ws, tmp_path / "state", calls, mode, SANDBOX)
    ran = _ran(ws)
    report(tmp_path / "report", "rules", mode, SANDBOX, len(PROBES), out, len(ran))
    assert not ran, f"a rule ran a repository script in {mode} mode"
    assert not [p for p in out.ran if p in PROBES]
    if mode in ("ask", "auto"):
        assert sorted(out.asked) == sorted(PROBES)  # the plain ones ran by their rule, unasked
        assert set(COVERED) <= set(out.ran)
    else:
        assert not out.asked


async def test_the_card_of_a_prefix_rule_says_what_it_never_covers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a").write_text("a\n")
    cards = []

    def answer(request):  # type: ignore[no-untyped-def]
        cards.append(request)
        return "reject_once"

    await drive(
        ws, tmp_path / "state", [("bash", {"command": "rg --pre ./x.sh a"})], "ask", SANDBOX, answer=answer
    )
    (card,) = cards
    texts = [r.text for o in card.options for r in o.rules]
    assert texts and all("--pre" in t and "asked each time" in t for t in texts if "with any arguments" in t)
    assert any("with any arguments" in t for t in texts)
