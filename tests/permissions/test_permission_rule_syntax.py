"""The rule syntax (files, CLI, wire): `tool(spec)` or a bare tool name; what each kind of rule covers; what is
refused, with a message saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgent.permissions import Intent, RuleError, Scoped, card, classify, describe, match, parse_rule


def _bash(workspace: Path, command: str) -> Intent:
    return classify("bash", {"command": command}, workspace)


def _allows(workspace: Path, rule: str, intent: Intent) -> bool | None:
    found = match(intent, [Scoped(parse_rule(rule), "project")])
    return None if found is None else found.allow


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("bash(npm test)", "bash(npm test)"),
        ("bash(npm test *)", "bash(npm test *)"),
        ("bash(npm test:*)", "bash(npm test *)"),  # Claude Code's spelling
        ("  bash( git   log  --oneline * ) ", "bash(git log --oneline *)"),
        ("bash(python3 x.py)", "bash(python3 x.py)"),
        ("edit(src/**)", "edit(src/**)"),
        ("write(docs/*.md)", "write(docs/*.md)"),
        ("read(/etc/hosts)", "read(/etc/hosts)"),
        ("web_fetch(Docs.Python.org)", "web_fetch(docs.python.org)"),
        ("web_fetch(*.python.org)", "web_fetch(*.python.org)"),
        ("mcp__git__git_status", "mcp__git__git_status"),
        ("bash", "bash"),
    ],
)
def test_rules_parse_to_one_spelling(text: str, canonical: str) -> None:
    assert parse_rule(text).text == canonical


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("bash(python3 *)", "only exact commands"),
        ("bash(uv run *)", "only exact commands"),
        ("bash(npx *)", "only exact commands"),
        ("bash(ls | wc)", "one simple command"),
        ("bash(echo $(id))", "substitution"),
        ("bash()", "parentheses are empty"),
        ("web_fetch(http://x/y)", "not a host"),
        ("not a rule(", "not a rule"),
        ("(x)", "not a rule"),
        ("", "not a rule"),
    ],
)
def test_a_bad_rule_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(RuleError, match=r"(?s).*" + says.replace("(", r"\(")):
        parse_rule(text)


def test_a_deny_rule_may_cover_an_interpreter_with_any_arguments() -> None:
    assert parse_rule("bash(python3 *)", "deny").text == "bash(python3 *)"


def test_a_rule_must_be_a_string() -> None:
    with pytest.raises(RuleError, match="must be a string"):
        parse_rule(3)


def test_exact_and_prefix_command_rules(workspace: Path) -> None:
    assert _allows(workspace, "bash(npm test)", _bash(workspace, "npm test")) is True
    assert _allows(workspace, "bash(npm test)", _bash(workspace, "npm test -- -w")) is None
    assert _allows(workspace, "bash(npm test *)", _bash(workspace, "npm test -- -w")) is True
    assert _allows(workspace, "bash(npm test *)", _bash(workspace, "npm testx")) is None
    assert _allows(workspace, "bash(git log --oneline *)", _bash(workspace, "git log --oneline -3")) is True
    assert _allows(workspace, "bash(git log --oneline *)", _bash(workspace, "git log -p")) is None
    # the words after Kgent's parse, not the characters: quoting does not matter
    assert _allows(workspace, "bash(grep -n 'a b' f)", _bash(workspace, 'grep -n "a b" f')) is True


def test_path_globs(workspace: Path) -> None:
    def edit(path: str) -> Intent:
        return classify("edit", {"path": path, "oldText": "a", "newText": "b"}, workspace)

    assert _allows(workspace, "edit(src/**)", edit("src/app.py")) is True
    assert _allows(workspace, "edit(src/**)", edit("src/a/b/c.py")) is True
    assert _allows(workspace, "edit(src/*)", edit("src/a/b.py")) is None
    assert _allows(workspace, "edit(**/*.py)", edit("app.py")) is True
    assert _allows(workspace, "edit(src/**)", edit("lib/x.py")) is None
    assert _allows(workspace, "edit(**)", edit(".env")) is None  # a glob never reaches a protected file
    assert _allows(workspace, "edit(.env)", edit(".env")) is True  # naming it does
    assert (
        _allows(workspace, "edit(**)", edit("/etc/hosts")) is None
    )  # a workspace glob never reaches outside
    assert _allows(workspace, "edit(/etc/*)", edit("/etc/hosts")) is True


def test_host_rules(workspace: Path) -> None:
    def fetch(url: str) -> Intent:
        return classify("web_fetch", {"url": url}, workspace)

    assert _allows(workspace, "web_fetch(93.184.216.34)", fetch("https://93.184.216.34/a")) is True
    assert _allows(workspace, "web_fetch(93.184.216.34)", fetch("https://93.184.216.35/a")) is None
    assert _allows(workspace, "web_fetch", fetch("https://93.184.216.35/a")) is True
    assert (
        _allows(workspace, "web_fetch", fetch("http://127.0.0.1:9/")) is None
    )  # private: never by a file rule


def test_file_rules_never_reach_outside_protected_or_the_network(workspace: Path) -> None:
    assert _allows(workspace, "bash(cat *)", _bash(workspace, "cat /etc/hosts")) is None
    assert _allows(workspace, "bash(cat *)", _bash(workspace, "cat .env")) is None
    assert _allows(workspace, "bash(git *)", _bash(workspace, "git push")) is None
    assert (
        _allows(workspace, "bash", _bash(workspace, "curl https://example.com")) is True
    )  # every call: said so
    assert _allows(workspace, "bash(curl *)", _bash(workspace, "curl https://example.com")) is True


def test_deny_speaks_for_any_part_and_wins(workspace: Path) -> None:
    rules = [Scoped(parse_rule("bash(ls *)"), "user"), Scoped(parse_rule("bash(rm *)", "deny"), "project")]
    found = match(_bash(workspace, "ls && rm -rf src"), rules)
    assert found is not None and not found.allow and "project rule `bash(rm *)`" in found.reason
    found = match(_bash(workspace, "ls -la"), rules)
    assert found is not None and found.allow and "user rule" in found.reason


def test_rules_in_words() -> None:
    assert (
        describe(parse_rule("bash(npm test *)"), "project")
        == "allow `npm test` with any arguments in this project"
    )
    assert describe(parse_rule("bash(python3 x.py)"), "session") == (
        "allow `python3 x.py` (exactly this command) this session"
    )
    assert describe(parse_rule("edit(a.txt)"), "session") == "allow edits to `a.txt` this session"
    assert describe(parse_rule("edit(src/**)", "deny"), "user") == "deny edits to `src/**` in every project"


def test_the_card_shows_each_rule_and_scope(workspace: Path) -> None:
    options, no_rule = card(_bash(workspace, "grep -n x f && python3 f"), project_trusted=True)
    assert no_rule is None
    by_id = {o.option_id: o for o in options}
    assert list(by_id) == [
        "allow_once",
        "allow_always",
        "allow_always_project",
        "reject_once",
        "reject_always",
        "reject_always_project",
    ]
    project = by_id["allow_always_project"]
    assert project.scope == "project" and project.kind == "allow_always"
    assert [r.rule for r in project.rules] == ["bash(grep *)", "bash(python3 f)"]
    assert project.name == "Always allow `grep …` and `python3 f` in this project"
    assert project.rules[0].text == "allow `grep` with any arguments in this project"
    assert by_id["reject_always"].rules[1].text == "deny `python3 f` (exactly this command) this session"
    edit = card(
        classify("edit", {"path": "a.txt", "oldText": "a", "newText": "b"}, workspace), project_trusted=True
    )
    assert edit[0][1].name == "Allow edits to `a.txt` this session"


def test_the_card_offers_no_always_when_no_rule_can_be_made(workspace: Path) -> None:
    options, no_rule = card(_bash(workspace, "for i in $(seq 1 15); do echo $i; done"), project_trusted=True)
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]
    assert no_rule is not None and "substitution" in no_rule


def test_the_card_offers_the_project_only_where_a_file_rule_would_apply(workspace: Path) -> None:
    untrusted, _ = card(_bash(workspace, "npm test"), project_trusted=False)
    assert [(o.option_id, o.name) for o in untrusted] == [
        ("allow_once", "Allow once"),
        ("allow_always", "Allow `npm test …` this session"),
        # kept in the user's own file for the project: the project's own allows would not count untrusted
        ("allow_always_project", "Always allow `npm test …` in this project (kept in your settings)"),
        ("reject_once", "Reject"),
        ("reject_always", "Reject `npm test …` this session"),
        ("reject_always_project", "Always reject `npm test …` in this project (kept in your settings)"),
    ]
    trusted, _ = card(_bash(workspace, "npm test"), project_trusted=True)
    assert [o.name for o in trusted if o.scope == "project"] == [
        "Always allow `npm test …` in this project",
        "Always reject `npm test …` in this project",
    ]
    outside, _ = card(_bash(workspace, "cat /etc/hosts"), project_trusted=True)
    assert "allow_always_project" not in [o.option_id for o in outside]  # a file rule would not reach /etc


def test_the_users_own_file_for_a_project_names_it_in_a_comment_no_folder_name_can_end(
    tmp_path: Path,
) -> None:
    from kgent.permissions.rulefiles import RuleFiles

    hostile = tmp_path / 'x\n[permissions]\nallow = ["bash"] #'
    hostile.mkdir()
    files = RuleFiles(env={"KGENT_CONFIG_DIR": str(tmp_path / "config")}, trusted=lambda _: False)
    # A deny (reject always in this project) creates the file: the folder's name must not bring an allow with it.
    files.writable("project", hostile).add(parse_rule("bash(rm *)", "deny"))
    text = files.personal_path(hostile).read_text()
    assert text.splitlines().count("[permissions]") == 1 and text.splitlines()[0].startswith("# Kgent:")
    assert [(r.rule.text, r.rule.allow) for r in files.scoped(hostile)] == [("bash(rm *)", False)]
