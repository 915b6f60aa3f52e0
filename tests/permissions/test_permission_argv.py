"""What runs is what was judged: Kgent's own word splitting, quote removal and glob expansion (checked against bash
itself), the argvs and wiring it hands to the executor, and where the git repository of a workspace lies."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kgent.files.gitdir import outside_git_dir, repository_dirs
from kgent.permissions import classify
from kgent.permissions.commands import read_only
from kgent.sandbox.argv import Plan, Stage

NAMES = [
    "a.py",
    "b.py",
    "ab",
    "Z",
    ".hidden",
    ".env.local",
    "-n",
    "--pre=sh",
    "-Osh",
    "?Osh",
    "[x]",
    "x",
    "a*b",
    "sp ace",
]


@pytest.fixture
def names(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "dir" / "sub").mkdir(parents=True)
    (ws / "dir" / "c.py").write_text("c\n")
    (ws / "dir" / ".d").write_text("d\n")
    (ws / "dir" / "sub" / "e.py").write_text("e\n")
    for name in NAMES:
        (ws / name).write_text(name + "\n")
    return ws


def _bash_words(ws: Path, words: str) -> list[str]:
    """The words bash makes of `words` in `ws` (C collation, bash's default options)."""
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {words}"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
    )
    return done.stdout.splitlines()


def _kgent_words(ws: Path, words: str) -> list[str]:
    plan = read_only(f"echo {words}", ws).plan
    assert plan is not None
    return list(plan.argvs()[0][1:])


@pytest.mark.parametrize(
    "words",
    [
        "*",
        "*.py",
        "?.py",
        "[ab].py",
        "[!a]*",
        "[^a]*",
        "[a-b]*",
        "[[:upper:]]",
        "[[:alpha:]][[:alpha:]]",
        ".*",
        ".e*",
        "*/",
        "*/*.py",
        "*/*/*.py",
        "dir/*",
        "dir/.*",
        "d?r/c.py",
        "./*.py",
        "nomatch*",
        "'*'",
        '"*".py',
        "a'*'b",
        "a\\*b",
        "a*b",
        "[x]",
        "\\[x]",
        "[-]*",
        "?Osh",
        "-*",
        "sp*",
        "'sp ace'",
        "[z-a]*",
        "[",
        "a[",
        "*.[pP][yY]",
        "dir/sub/*",
    ],
)
def test_globs_expand_as_bash_expands_them(names: Path, words: str) -> None:
    # what bash would pass, except that a glob's match that would read as an option is passed as `./-name`
    expected = ["./" + w if w.startswith("-") else w for w in _bash_words(names, words)]
    assert _kgent_words(names, words) == expected


def test_a_name_from_a_glob_that_looks_like_an_option_is_passed_as_a_path(names: Path) -> None:
    plan = read_only("rg . *", names).plan
    assert plan is not None
    argv = plan.argvs()[0]
    assert "./--pre=sh" in argv and "./-Osh" in argv and "./-n" in argv
    assert not [w for w in argv[1:] if w.startswith("-")]
    intent = classify("bash", {"command": "rg . *"}, names)
    assert (intent.operation, intent.scope, intent.protected) == ("read", "workspace", False)
    assert intent.plan == plan
    git = read_only("git grep -e x ?Osh [-]-pre=sh", names).plan
    assert git is not None and git.argvs() == (("git", "grep", "-e", "x", "./-Osh", "?Osh", "./--pre=sh"),)


def test_options_the_model_writes_are_still_judged(names: Path) -> None:
    assert read_only("rg --pre=sh . a.py", names).problem == "rg with option --pre"
    assert read_only("rg '--pre=sh' . a.py", names).problem == "rg with option --pre"
    assert read_only("git grep -Osh x", names).problem is not None
    assert read_only("git grep -e x -- -Osh", names).problem is None  # after `--`, an operand


def test_a_glob_inside_an_option_word_expands_too(names: Path, tmp_path: Path) -> None:
    # `--include=*.py` matches nothing here, so it stays an option, as in bash
    plan = read_only("grep -r --include=*.py x .", names).plan
    assert plan is not None and "--include=*.py" in plan.argvs()[0]
    (names / "--include=z.py").write_text("z\n")
    plan = read_only("grep -r --include=*.py x .", names).plan
    assert plan is not None and plan.argvs()[0] == ("grep", "-r", "./--include=z.py", "x", ".")


def test_a_hidden_glob_never_yields_dot_or_dot_dot(names: Path) -> None:
    plan = read_only("cat dir/sub/.?* .*", names).plan
    assert plan is not None
    assert plan.argvs()[0] == ("cat", "dir/sub/.?*", ".env.local", ".hidden")
    assert classify("bash", {"command": "cat .*"}, names).protected  # `.env.local` is a secret


def test_the_plan_wires_pipes_lists_and_redirections_as_written(names: Path) -> None:
    plan = read_only("cat a.py | wc -l && echo ok || echo no; ls 2>&1 >/dev/null\nls |& cat", names).plan
    assert plan == Plan(
        steps=(
            ("", (Stage(("cat", "a.py")), Stage(("wc", "-l")))),
            ("&&", (Stage(("echo", "ok")),)),
            ("||", (Stage(("echo", "no")),)),
            (";", (Stage(("ls",), redirects=((2, 1), (1, None))),)),
            (";", (Stage(("ls",), pipe_stderr=True), Stage(("cat",)))),
        )
    )
    assert read_only("ls &>/dev/null", names).plan == Plan(
        steps=(("", (Stage(("ls",), redirects=((1, None), (2, None))),)),)
    )


@pytest.mark.parametrize(
    "command",
    [
        "ls {a,b}.py",
        "ls ~",
        "cat ~/x",
        "echo $HOME",
        "echo `id`",
        "cat <<EOF",
        "cat a.py > out",
        "ls 3>&1",
        "ls >&-",
        "ls 2>/dev/null 0<&3",
        "*.py",
        "[a]b x",
    ],
)
def test_braces_tildes_substitutions_and_other_redirections_stay_asked(names: Path, command: str) -> None:
    intent = classify("bash", {"command": command}, names)
    assert intent.plan is None
    assert intent.operation != "read" or intent.scope == "outside"


def test_a_glob_never_lists_a_directory_outside_the_workspace(names: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private-name.txt").write_text("x\n")
    (names / "out").symlink_to(outside, target_is_directory=True)
    for command in ("ls out/*", "ls ../outside/*", f"ls {outside}/*"):
        intent = classify("bash", {"command": command}, names)
        assert intent.scope == "outside", command
        assert "private-name" not in intent.reason and "private-name" not in " ".join(intent.paths), command


def test_a_nul_byte_is_asked(names: Path) -> None:
    assert read_only("echo a\0b", names).problem == "a NUL byte in the command"


def test_a_glob_with_too_many_matches_is_asked(tmp_path: Path) -> None:
    for i in range(1001):
        (tmp_path / f"f{i}").touch()
    assert "more than 1000" in (read_only("ls *", tmp_path).problem or "")


# -- where the repository is ---------------------------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    subprocess.run(
        ["git", *args], cwd=cwd, env={**env, "GIT_COMMITTER_EMAIL": "t@e"}, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    _git(outside, "init", "-q", ".")
    (outside / "a.txt").write_text("a\n")
    _git(outside, "add", "a.txt")
    _git(outside, "commit", "-qm", "first")
    return outside


def _git_intent(ws: Path, command: str = "git log --oneline") -> tuple[str, str]:
    intent = classify("bash", {"command": command}, ws)
    return intent.scope, intent.reason


def test_a_repository_inside_the_workspace_is_read_unasked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", ".")
    assert _git_intent(ws)[0] == "workspace"
    assert repository_dirs(ws) == (str((ws / ".git").resolve()),)


def test_a_worktree_whose_git_directory_is_elsewhere_is_an_outside_read(repo: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _git(repo, "worktree", "add", "-q", str(ws))
    assert (ws / ".git").is_file()
    for command in ("git log --oneline", "git status", "git ls-files", "git diff -- a.txt", "git grep -e a"):
        scope, reason = _git_intent(ws, command)
        assert scope == "outside" and "reads outside the workspace" in reason, command
        assert str(repo.resolve()) in reason
    assert (
        classify("bash", {"command": "cat a.txt"}, ws).scope == "workspace"
    )  # only git reads the repository


def test_a_git_file_or_symlink_pointing_outside_is_an_outside_read(repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(repo / ".git", target_is_directory=True)
    assert _git_intent(linked)[0] == "outside"
    filed = tmp_path / "filed"
    filed.mkdir()
    (filed / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert _git_intent(filed)[0] == "outside"
    relative = tmp_path / "relative"
    relative.mkdir()
    (relative / ".git").write_text("gitdir: ../outside/.git\n")
    assert outside_git_dir(relative, {}) == str((repo / ".git").resolve())


def test_a_git_file_pointing_inside_the_workspace_stays_a_workspace_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "meta").mkdir(parents=True)
    _git(ws / "meta", "init", "-q", "--bare", "repo.git")
    (ws / ".git").write_text("gitdir: meta/repo.git\n")
    assert _git_intent(ws)[0] == "workspace"


def test_commondir_alternates_links_and_git_dir_variables_pointing_out_are_outside(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", ".")
    assert outside_git_dir(ws, {}) is None
    (ws / ".git" / "commondir").write_text(str(repo / ".git") + "\n")
    assert outside_git_dir(ws, {}) == str((repo / ".git").resolve())
    (ws / ".git" / "commondir").unlink()
    (ws / ".git" / "objects" / "info" / "alternates").write_text(str(repo / ".git" / "objects") + "\n")
    assert outside_git_dir(ws, {}) == str((repo / ".git" / "objects").resolve())
    (ws / ".git" / "objects" / "info" / "alternates").unlink()
    (ws / ".git" / "packed-refs").symlink_to(repo / ".git" / "HEAD")
    assert outside_git_dir(ws, {}) == str((repo / ".git" / "HEAD").resolve())
    (ws / ".git" / "packed-refs").unlink()
    (ws / ".git" / "objects" / "pack").rmdir()
    (ws / ".git" / "objects" / "pack").symlink_to(
        repo / ".git" / "objects" / "pack", target_is_directory=True
    )
    assert outside_git_dir(ws, {}) == str((repo / ".git" / "objects" / "pack").resolve())
    (ws / ".git" / "objects" / "pack").unlink()
    assert outside_git_dir(ws, {"GIT_DIR": str(repo / ".git")}) == str((repo / ".git").resolve())
    assert outside_git_dir(ws, {"GIT_DIR": ".git"}) is None
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / ".git" / "objects"))
    assert _git_intent(ws)[0] == "outside"


def test_a_repository_above_the_workspace_is_outside(repo: Path) -> None:
    ws = repo / "package"
    ws.mkdir()
    scope, reason = _git_intent(ws)
    assert scope == "outside" and str((repo / ".git").resolve()) in reason
    (ws / ".git").mkdir()  # its own repository (here an empty one) is what git reads then
    assert _git_intent(ws)[0] == "workspace"
