"""Fixture SWE-bench instances (the `fixture` fixture is in conftest.py): two small git repos with failing tests, bare mirrors named owner__repo.git, and
per-instance scripts for the scripted provider that make the fix (or fail, or stall)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
CALC_TEST = (
    "from calc import add, mul\n\nassert add(2, 3) == 5, 'add'\nassert mul(2, 3) == 6, 'mul'\nprint('ok')\n"
)
# In every commit after a base (message, file content, a tag's message): no workspace, trajectory or command may
# reach it.
MARKER = "KGENT-FUTURE-MARKER-7f3a9c"
TEXT = "def shout(s):\n    return s.lower() + '!'\n"
TEXT_TEST = "from text import shout\n\nassert shout('hi') == 'HI!', shout('hi')\nprint('ok')\n"


def git(*args: str, cwd: Path) -> str:
    out = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def make_repo(root: Path, files: dict[str, str], future: dict[str, str]) -> tuple[Path, str, str]:
    """A repo with two commits (the base on top of an older one) and later ones carrying MARKER: the fix (returned;
    on main, tagged), a later commit on another branch and a pull-request ref (added to the mirror)."""
    root.mkdir(parents=True)
    git("init", "-q", "-b", "main", ".", cwd=root)
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "README").write_text("an older commit\n")
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "older", cwd=root)
    (root / "README").write_text("the base\n")
    git("commit", "-qam", "base", cwd=root)
    base = git("rev-parse", "HEAD", cwd=root)
    for name, text in future.items():
        (root / name).write_text(text)
    (root / "NEWS").write_text(f"fixed: {MARKER}\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", f"the fix {MARKER}", cwd=root)
    fix = git("rev-parse", "HEAD", cwd=root)
    git("tag", "-a", "v1", "-m", f"release {MARKER}", cwd=root)
    git("checkout", "-q", "-b", "later", cwd=root)
    (root / "LATER").write_text(f"{MARKER} later\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", f"later {MARKER}", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    return root, base, fix


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool": "edit", "args": {"path": path, "oldText": old, "newText": new}}


def bash(command: str) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": command}}


def fix_script(path: str, old: str, new: str, test: str) -> list[list[dict[str, Any]]]:
    """Read, fix, run the failing test, answer (four model turns)."""
    return [
        [{"text": f"Looking at {path}."}, {"tool": "read", "args": {"path": path}}],
        [edit(path, old, new)],
        [bash(f"python3 {test}")],
        [{"text": f"Fixed {path}; {test} passes."}],
    ]


@dataclass
class Fixture:
    root: Path
    mirrors: Path
    instances: Path
    scripts: Path
    records: list[dict[str, Any]]
    future: dict[str, str]  # repo → the fix commit no workspace may reach

    @property
    def ids(self) -> list[str]:
        return [r["instance_id"] for r in self.records]

    def record(self, instance_id: str) -> dict[str, Any]:
        return next(r for r in self.records if r["instance_id"] == instance_id)

    def script(self, instance_id: str, script: list[list[dict[str, Any]]]) -> None:
        (self.scripts / f"{instance_id}.json").write_text(json.dumps(script))

    def write_swebench5(self, path: Path) -> Path:
        """The instances as a swebench 5 file: the classic fields plus image, eval_script, log_parser, eval_type
        (what its harness's make_test_spec reads), the test lists as lists."""
        path.write_text("".join(json.dumps(swebench5(r)) + "\n" for r in self.records))
        return path

    def argv(self, out: Path, *extra: str) -> list[str]:
        """`kgent swebench run` arguments for these instances (scripted, no cloning, no bar)."""
        return [
            "swebench",
            "run",
            "--instances",
            str(self.instances),
            "--repos",
            str(self.mirrors),
            "--no-clone",
            "--out",
            str(out),
            "--model-name",
            "kgent-test",
            "--provider",
            "scripted",
            "--script",
            str(self.scripts),
            "--no-progress",
            *extra,
        ]


def swebench5(record: dict[str, Any]) -> dict[str, Any]:
    """A classic record in swebench 5's schema (the image named as its harness names the prebuilt ones)."""
    test = "test_calc.py" if record["repo"] == "acme/calc" else "test_text.py"
    image = "swebench/sweb.eval.x86_64." + record["instance_id"].lower().replace("__", "_1776_") + ":latest"
    return {
        **record,
        "FAIL_TO_PASS": [test],
        "PASS_TO_PASS": [],
        "image": image,
        "eval_script": f"#!/bin/bash\nset -uxo pipefail\ncd /testbed\npython3 {test}\n",
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
    }


def make_fixture(root: Path) -> Fixture:
    src = root / "src"
    calc, calc_base, calc_fix = make_repo(
        src / "calc",
        {"calc.py": CALC, "test_calc.py": CALC_TEST},
        {"calc.py": "def add(a, b):\n    return a + b\n"},
    )
    text, text_base, text_fix = make_repo(
        src / "text",
        {"text.py": TEXT, "test_text.py": TEXT_TEST},
        {"text.py": TEXT.replace("lower", "upper")},
    )
    mirrors = root / "mirrors"
    mirrors.mkdir()
    for src_repo, fix in ((calc, calc_fix), (text, text_fix)):
        mirror = mirrors / f"acme__{src_repo.name}.git"
        git("clone", "-q", "--bare", str(src_repo), str(mirror), cwd=root)
        git("update-ref", "refs/pull/1/head", fix, cwd=mirror)

    def inst(iid: str, repo: str, base: str, problem: str, **extra: Any) -> dict[str, Any]:
        return {
            "instance_id": iid,
            "repo": repo,
            "base_commit": base,
            "problem_statement": problem,
            "hints_text": "",
            "version": "1.0",
            "FAIL_TO_PASS": "[]",
            "PASS_TO_PASS": "[]",
            "patch": "",
            "test_patch": "",
            "created_at": "2024-01-01T00:00:00Z",
            "environment_setup_commit": base,
            **extra,
        }

    records = [
        inst("acme__calc-1", "acme/calc", calc_base, "add(2, 3) returns -1; it should return 5."),
        inst("acme__calc-2", "acme/calc", calc_base, "mul(2, 3) returns 5; it should return 6."),
        inst("acme__calc-3", "acme/calc", calc_base, "Please add a calc_ext module with a neg(x) function."),
        inst("acme__text-1", "acme/text", text_base, "shout('hi') returns 'hi!', not 'HI!'."),
    ]
    instances = root / "instances.jsonl"
    instances.write_text("".join(json.dumps(r) + "\n" for r in records))
    fx = Fixture(
        root, mirrors, instances, root / "scripts", records, {"acme/calc": calc_fix, "acme/text": text_fix}
    )
    fx.scripts.mkdir()
    fx.script("acme__calc-1", fix_script("calc.py", "return a - b", "return a + b", "test_calc.py || true"))
    fx.script(
        "acme__calc-2",
        fix_script(
            "calc.py",
            "def mul(a, b):\n    return a + b",
            "def mul(a, b):\n    return a * b",
            "test_calc.py || true",
        ),
    )
    fx.script(
        "acme__calc-3",
        [
            [{"tool": "write", "args": {"path": "calc_ext.py", "content": "def neg(x):\n    return -x\n"}}],
            [bash("python3 -c 'import calc_ext; assert calc_ext.neg(2) == -2'")],
            [{"text": "Added calc_ext.neg."}],
        ],
    )
    fx.script("acme__text-1", fix_script("text.py", "s.lower()", "s.upper()", "test_text.py"))
    return fx


def apply_and_test(
    fx: Fixture, instance_id: str, patch: str, check: str, tmp: Path
) -> subprocess.CompletedProcess[str]:
    """What the harness does, minus Docker: a clean checkout at base_commit, `git apply` the patch, run `check`
    (a Python snippet) there. One checkout per repo, cleaned between checks."""
    rec = fx.record(instance_id)
    ws = tmp / "checks" / rec["repo"].replace("/", "__")
    if not ws.is_dir():
        ws.parent.mkdir(exist_ok=True)
        git(
            "clone",
            "-q",
            "--no-checkout",
            str(fx.mirrors / (rec["repo"].replace("/", "__") + ".git")),
            str(ws),
            cwd=tmp,
        )
    git("checkout", "-q", "-f", "--detach", rec["base_commit"], cwd=ws)
    git("clean", "-qfdx", cwd=ws)
    if patch:
        subprocess.run(
            ["git", "apply", "--verbose", "-"],
            cwd=ws,
            input=patch,
            text=True,
            check=True,
            capture_output=True,
        )
    return subprocess.run(["python3", "-B", "-c", check], cwd=ws, capture_output=True, text=True)
