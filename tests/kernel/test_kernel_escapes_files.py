"""Escape probes of the files Kgent reads on its own — instruction files and skills — in plan, ask, auto and
risk_based with the bubblewrap sandbox (where this machine has it), every approval rejected.

A hostile repository links `AGENTS.md` (at the root, and a nested `AGENTS.md` or `CLAUDE.md` in a directory of its
own for each target) to each protected name (`.env`, `.env.local`, `.envrc`, ssh keys, a `.pem`, a `.key`,
`.git/config`) and to a file outside the workspace, or hard-links it to a file outside and to `.env`; its project
skills are a folder linked outside, `SKILL.md` files linked outside, to a secret or hard-linked, and a real folder
holding a link out, a `.env` and a hard link; the user's own skill folder holds the same three. Each target holds a
marker; none may appear in any event, session line or model request, and every refused file is named in the
`instructions` event.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path, PurePath

import pytest

from escapes import MODES, Call, drive, git, marker, report
from kgent.sandbox.bwrap import detect

NAMES = ("AGENTS.md", "CLAUDE.md")
LINKED = {  # marker kind → the protected name (in the workspace) an instruction file is a symlink to
    "env": ".env",
    "envlocal": ".env.local",
    "envrc": ".envrc",
    "rsa": "id_rsa",
    "ed25519": "id_ed25519",
    "pem": "deploy.pem",
    "key": "server.key",
    "gitconfig": ".git/config",
}


@dataclass
class World:
    ws: Path
    markers: dict[str, str]
    state: Path
    probes: list[Call]
    dirs: list[str]  # the probe directories, whose instruction files must all be skipped
    user_skills: Path


def _instructions_world(root: Path) -> World:
    markers = {k: secrets.token_hex(8) for k in (*LINKED, "outside", "hardout", "hardenv")}
    ws, out = root / "ws", root / "outside"
    ws.mkdir(parents=True)
    out.mkdir()
    git(ws, "init", "-q", ".")
    git(
        ws,
        "config",
        "remote.origin.url",
        f"https://me:{marker('gitconfig', markers['gitconfig'])}@example.com/r",
    )
    for kind, name in LINKED.items():
        if kind != "gitconfig":
            (ws / name).write_text(f"TOKEN={marker(kind, markers[kind])}\n")
    (out / "secret.txt").write_text(marker("outside", markers["outside"]) + "\n")
    (out / "hard.txt").write_text(marker("hardout", markers["hardout"]) + "\n")
    (ws / ".env").write_text(
        f"TOKEN={marker('env', markers['env'])}\nOTHER={marker('hardenv', markers['hardenv'])}\n"
    )
    targets: list[tuple[str, str, Path]] = [(k, "symlink", ws / n) for k, n in LINKED.items()]
    targets += [("outside", "symlink", out / "secret.txt"), ("hardout", "hardlink", out / "hard.txt")]
    targets += [("hardenv", "hardlink", ws / ".env")]
    os.symlink(ws / ".env", ws / "AGENTS.md")  # the root's own, loaded when the run opens
    probes: list[Call] = []
    dirs = ["."]
    for kind, how, target in targets:
        for name in NAMES:
            d = f"i_{kind}_{name.split('.')[0].lower()}"
            (ws / d).mkdir()
            (ws / d / "x.txt").write_text("plain\n")
            (os.symlink if how == "symlink" else os.link)(target, ws / d / name)
            probes.append(("read", {"path": f"{d}/x.txt"}))
            dirs.append(d)
    return World(ws, markers, root / "state", probes, dirs, root / "none")


def _skills_world(root: Path, user_dir: Path) -> World:
    kinds = (
        "folder",
        "foldername",
        "body",
        "front",
        "frontenv",
        "fronthard",
        "legitlink",
        "legitenv",
        "legittwin",
    )
    markers = {k: secrets.token_hex(8) for k in (*kinds, "userlink", "userenv", "usertwin")}
    ws, out = root / "ws", root / "outside"
    skills = ws / ".kgent" / "skills"
    skills.mkdir(parents=True)
    (out / "skilldir").mkdir(parents=True)

    def skill_md(name: str, description: str, body: str = "") -> str:
        return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"

    (out / "skilldir" / "SKILL.md").write_text(
        skill_md("linked", "a folder that links out", marker("body", markers["body"]))
    )
    (out / "skilldir" / "secret.txt").write_text(marker("folder", markers["folder"]) + "\n")
    (out / "skilldir" / f"name-{marker('foldername', markers['foldername'])}.txt").write_text("x\n")
    os.symlink(out / "skilldir", skills / "linked", target_is_directory=True)
    (out / "front.md").write_text(skill_md("front", marker("front", markers["front"])))
    (skills / "front").mkdir()
    os.symlink(out / "front.md", skills / "front" / "SKILL.md")
    (ws / ".env.skill").write_text(skill_md("frontenv", marker("frontenv", markers["frontenv"])))
    (skills / "frontenv").mkdir()
    os.symlink(ws / ".env.skill", skills / "frontenv" / "SKILL.md")
    (out / "hardfront.md").write_text(skill_md("fronthard", marker("fronthard", markers["fronthard"])))
    (skills / "fronthard").mkdir()
    os.link(out / "hardfront.md", skills / "fronthard" / "SKILL.md")
    legit = skills / "legit"
    legit.mkdir()
    (legit / "SKILL.md").write_text(skill_md("legit", "a real skill"))
    (out / "legit-secret.txt").write_text(marker("legitlink", markers["legitlink"]) + "\n")
    os.symlink(out / "legit-secret.txt", legit / "link.txt")
    (legit / ".env").write_text(marker("legitenv", markers["legitenv"]) + "\n")
    (out / "legit-twin.txt").write_text(marker("legittwin", markers["legittwin"]) + "\n")
    os.link(out / "legit-twin.txt", legit / "twin.txt")
    mine = user_dir / "skills" / "mine"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text(skill_md("mine", "the user's own skill"))
    (out / "user-secret.txt").write_text(marker("userlink", markers["userlink"]) + "\n")
    os.symlink(out / "user-secret.txt", mine / "link.txt")
    (mine / ".env").write_text(marker("userenv", markers["userenv"]) + "\n")
    (out / "user-twin.txt").write_text(marker("usertwin", markers["usertwin"]) + "\n")
    os.link(out / "user-twin.txt", mine / "twin.txt")
    linked = ".kgent/skills/linked"
    probes: list[Call] = [
        ("read", {"path": f"{linked}/secret.txt"}),
        ("read", {"path": f"{linked}/SKILL.md"}),
        ("ls", {"path": linked}),
        ("find", {"pattern": "*", "path": linked}),
        ("grep", {"pattern": "KGENTSECRET", "path": linked}),
        ("read", {"path": str(out / "skilldir" / "secret.txt")}),
        ("read", {"path": ".kgent/skills/legit/link.txt"}),
        ("read", {"path": ".kgent/skills/legit/.env"}),
        ("read", {"path": ".kgent/skills/legit/twin.txt"}),
        ("grep", {"pattern": "KGENTSECRET", "path": ".kgent/skills/legit"}),
        ("read", {"path": str(mine / "link.txt")}),
        ("read", {"path": str(mine / ".env")}),
        ("read", {"path": str(mine / "twin.txt")}),
        ("grep", {"pattern": "KGENTSECRET", "path": str(mine)}),
    ]
    return World(ws, markers, root / "state", probes, [], user_dir / "skills")


SANDBOX = detect()
PROMPT_PROBES = 4  # the skills that could reach the system prompt: front, frontenv, fronthard, linked's body


def test_there_are_enough_probes(tmp_path: Path) -> None:
    i = _instructions_world(tmp_path / "i")
    s = _skills_world(tmp_path / "s", tmp_path / "user")
    assert len(i.probes) + 1 + len(s.probes) + PROMPT_PROBES >= 40


@pytest.mark.parametrize("mode", MODES)
async def test_no_instruction_file_sends_a_protected_or_outside_file(tmp_path: Path, mode: str) -> None:
    world = _instructions_world(tmp_path)
    out = await drive(world.ws, world.state, world.probes, mode, SANDBOX)
    leaks = out.leaks(world.markers)
    report(world.state, "instructions", mode, SANDBOX, len(world.probes) + 1, out, len(leaks))
    assert not leaks, f"leaked {sorted(leaks)} in {mode} mode"
    assert sorted(out.ran) == sorted(f'read {{"path": "{d}/x.txt"}}' for d in world.dirs[1:])
    named = {str(PurePath(p).parent.relative_to(world.ws)) for p in out.skipped}
    assert named == set(world.dirs), sorted(set(world.dirs) - named)  # each one named, with its reason


@pytest.mark.parametrize("mode", MODES)
async def test_no_skill_reads_outside_or_a_secret_unasked(
    tmp_path: Path, mode: str, _user_config_dir: str
) -> None:
    world = _skills_world(tmp_path, Path(_user_config_dir))
    out = await drive(world.ws, world.state, world.probes, mode, SANDBOX)
    leaks = out.leaks(world.markers)
    report(world.state, "skills", mode, SANDBOX, len(world.probes) + PROMPT_PROBES, out, len(leaks))
    assert not leaks, f"leaked {sorted(leaks)} in {mode} mode"
    system = out.texts[-1]
    assert "legit" in system and "mine" in system  # the real skills are listed (the suite is not vacuous)
    for name in ("linked", "front", "frontenv", "fronthard"):
        assert f"- {name}:" not in system
    assert {os.path.basename(p) for p in out.skipped} >= {"linked", "SKILL.md"}
    assert 'grep {"path": ".kgent/skills/legit", "pattern": "KGENTSECRET"}' in out.ran
