"""The rule files: `[permissions] allow / deny` in the user's and the project's config.toml — read again when they
change, a bad rule reported (file and rule) while the others load, written without touching the rest of the file;
a project's allows count only when it is trusted, its denies always."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from kgent.core.paths import is_trusted
from kgent.ext.trust import set_trusted
from kgent.permissions import RuleError, RuleFile, RuleFiles, Scoped, classify, match, parse_rule


def _texts(scoped: list[Scoped]) -> list[tuple[str, str, str]]:
    return [(s.scope, s.rule.decision, s.rule.text) for s in scoped]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    st = path.stat()  # a new mtime even within the file system's time granularity
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_user_and_project_rules_load_and_a_project_allows_only_when_trusted(workspace: Path) -> None:
    files = RuleFiles()
    _write(files.user_path(), '[permissions]\nallow = ["bash(npm test *)"]\ndeny = ["bash(rm *)"]\n')
    _write(
        files.project_path(workspace),
        '[permissions]\nallow = ["edit(src/**)"]\ndeny = ["bash(git push *)"]\n',
    )
    assert not files.is_trusted(workspace)
    assert _texts(files.scoped(workspace)) == [
        ("project", "deny", "bash(git push *)"),
        ("user", "deny", "bash(rm *)"),
        ("user", "allow", "bash(npm test *)"),
    ]
    set_trusted(workspace, True)
    assert is_trusted(workspace)
    assert ("project", "allow", "edit(src/**)") in _texts(files.scoped(workspace))


def test_a_file_is_read_again_when_it_changes(workspace: Path) -> None:
    file = RuleFile(workspace / ".kgent" / "config.toml")
    assert file.load().allow == ()
    _write(file.path, '[permissions]\nallow = ["bash(ls *)"]\n')
    assert [r.text for r in file.load().allow] == ["bash(ls *)"]
    _write(file.path, '[permissions]\nallow = ["bash(ls *)", "bash(cat *)"]\n')
    assert [r.text for r in file.load().allow] == ["bash(ls *)", "bash(cat *)"]
    file.path.unlink()
    assert file.load().allow == ()


def test_a_bad_rule_is_reported_with_file_and_rule_and_the_others_load(workspace: Path) -> None:
    file = RuleFile(workspace / ".kgent" / "config.toml")
    _write(file.path, '[permissions]\nallow = ["bash(ls *)", "bash(python3 *)", 3]\ndeny = "bash(rm *)"\n')
    rules = file.load()
    assert [r.text for r in rules.allow] == ["bash(ls *)"]
    assert len(rules.problems) == 3
    assert all(str(file.path) in p for p in rules.problems)
    assert "'bash(python3 *)'" in rules.problems[0] and "only exact commands" in rules.problems[0]
    assert "deny must be a list" in rules.problems[2]


def test_a_file_that_is_not_toml_is_reported_not_raised(workspace: Path) -> None:
    file = RuleFile(workspace / ".kgent" / "config.toml")
    _write(file.path, "[permissions\nallow = [")
    rules = file.load()
    assert (
        rules.allow == () and "is not valid TOML" in rules.problems[0] and str(file.path) in rules.problems[0]
    )


def test_writing_keeps_the_other_tables_and_comments(workspace: Path) -> None:
    path = workspace / ".kgent" / "config.toml"
    original = (
        "# my project's settings\n"
        "[extensions]\n"
        'load = ["tools.py"]  # our tools\n'
        "\n"
        "[permissions]\n"
        'allow = ["bash(ls *)"]\n'
        "\n"
        "[mcp_servers.git]\n"
        'command = "uvx"\n'
        'args = ["mcp-server-git"]\n'
    )
    _write(path, original)
    file = RuleFile(path)
    assert file.add(parse_rule("bash(npm test *)"))
    assert not file.add(parse_rule("bash(npm test:*)"))  # the same rule, spelled otherwise
    assert file.add(parse_rule("edit(.env)", "deny"))
    text = path.read_text()
    assert text.startswith('# my project\'s settings\n[extensions]\nload = ["tools.py"]  # our tools\n')
    assert text.endswith('[mcp_servers.git]\ncommand = "uvx"\nargs = ["mcp-server-git"]\n')
    data = tomllib.loads(text)
    assert data["permissions"] == {"allow": ["bash(ls *)", "bash(npm test *)"], "deny": ["edit(.env)"]}
    assert file.remove(parse_rule("bash(ls *)"))
    assert not file.remove(parse_rule("bash(ls *)"))
    assert tomllib.loads(path.read_text())["permissions"]["allow"] == ["bash(npm test *)"]
    assert [r.text for r in file.load().allow] == ["bash(npm test *)"]


def test_writing_a_new_file_and_a_file_without_the_table(workspace: Path) -> None:
    new = RuleFile(workspace / "new" / "config.toml")
    new.add(parse_rule("bash(make test *)"))
    assert tomllib.loads(new.path.read_text()) == {"permissions": {"allow": ["bash(make test *)"]}}
    plain = workspace / "plain.toml"
    _write(plain, '[extensions]\nload = ["x.py"]')
    RuleFile(plain).add(parse_rule("web_fetch(docs.python.org)"))
    assert tomllib.loads(plain.read_text()) == {
        "extensions": {"load": ["x.py"]},
        "permissions": {"allow": ["web_fetch(docs.python.org)"]},
    }


def test_permissions_written_otherwise_are_left_for_a_person(workspace: Path) -> None:
    path = workspace / "dotted.toml"
    _write(path, 'permissions.allow = ["bash(ls *)"]\n')
    with pytest.raises(RuleError, match="edit them by hand"):
        RuleFile(path).add(parse_rule("bash(cat *)"))
    assert path.read_text() == 'permissions.allow = ["bash(ls *)"]\n'


def test_deny_in_an_untrusted_project_still_wins_over_a_user_allow(workspace: Path) -> None:
    files = RuleFiles()
    _write(files.user_path(), '[permissions]\nallow = ["bash(git *)"]\n')
    _write(files.project_path(workspace), '[permissions]\ndeny = ["bash(git reset *)"]\n')
    intent = classify("bash", {"command": "git reset --hard"}, workspace)
    found = match(intent, files.scoped(workspace))
    assert found is not None and not found.allow
    found = match(classify("bash", {"command": "git status"}, workspace), files.scoped(workspace))
    assert found is not None and found.allow and found.by[0].scope == "user"


def test_the_config_dir_follows_the_environment_it_is_read_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """platformdirs' answer is kept per value of what it reads (kgent.core.paths): a changed XDG_CONFIG_HOME or HOME
    is a new answer, as it was when each call asked platformdirs."""
    import platformdirs

    from kgent.core.paths import user_config_dir

    monkeypatch.delenv("KGENT_CONFIG_DIR", raising=False)
    for xdg in (tmp_path / "a", tmp_path / "b", tmp_path / "a"):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
        assert user_config_dir() == Path(platformdirs.user_config_dir("kgent")) == xdg / "kgent"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    for home in (tmp_path / "h1", tmp_path / "h2"):
        monkeypatch.setenv("HOME", str(home))
        assert user_config_dir() == Path(platformdirs.user_config_dir("kgent"))
    monkeypatch.setenv("KGENT_CONFIG_DIR", str(tmp_path / "own"))
    assert user_config_dir() == tmp_path / "own"


def test_the_personal_rule_file_is_named_by_the_resolved_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real project"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    files = RuleFiles()
    path = files.personal_path(link)
    assert path == files.personal_path(real) and path.name.startswith("real_project-")
    assert files.personal(link).path == path
    link.unlink()
    other = tmp_path / "other"
    other.mkdir()
    link.symlink_to(other)  # the link moved: the next call names the other project's file
    assert files.personal_path(link).name.startswith("other-") and files.personal(link).path != path
