# Concept: what the model is told for one instance — the task prompt (a template a user may replace) and the
# system prompt of an unattended run.
"""Templates name fields as `{{field}}`: `instance_id`, `repo`, `base_commit`, `problem_statement`, `hints_text`,
`workspace`, or any other field of the instance record (e.g. `{{version}}`). Nothing else is special, so code and
shell snippets with `{`, `$` or `%` stay as written."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError
from kgent.swebench.instances import Instance

DEFAULT_TEMPLATE = """\
<repository>
A checkout of {{repo}} at commit {{base_commit}} is in your working directory, {{workspace}}.
</repository>

<issue>
{{problem_statement}}
</issue>

Resolve the issue by changing the repository's non-test source files. Steps that work well:
1. Find and read the code the issue is about.
2. Reproduce the problem with a small script and run it with bash.
3. Make a minimal, general fix (not one that only satisfies your script).
4. Run your script again, and the repository's relevant tests if they run here, to confirm the fix.
Do not change or add tests, do not commit, and do not ask questions: nobody will answer. When you are done, stop
calling tools and say in a few lines what you changed.
"""

_SYSTEM = """\
You are Kgent, an autonomous coding agent. You work alone on a disposable checkout of a software repository: \
no one approves your actions or answers questions, so decide and act. Available tools: {tools}.

Guidelines:
- Explore with grep, find, ls and read; read a file before you edit it.
- Use edit for precise changes: oldText must match the file exactly and be unique. Use write for new files.
- Run commands and scripts with bash; keep their output short (filter with grep, head, tail).
- The repository's own dependencies may be missing here; if its tests cannot run, verify with a small script.
- Your changes to the working tree are the result; when you finish, they are collected as a patch.

Current date: {date}
Working directory: {workspace}"""

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def load_template(path: str | Path | None) -> str:
    """The template in `path` (checked against an empty instance's fields), or the default one."""
    if path is None:
        return DEFAULT_TEMPLATE
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the prompt template {path}: {exc.strerror}") from None
    if "{{problem_statement}}" not in re.sub(r"\{\{\s*(\w+)\s*\}\}", r"{{\1}}", text):
        raise ConfigError(
            f"the prompt template {path} never uses {{{{problem_statement}}}}: the model would not "
            "see the issue"
        )
    return text


def render(template: str, instance: Instance, workspace: Path) -> str:
    """The template with each `{{field}}` replaced; ConfigError names a field the instance does not have."""
    values: dict[str, Any] = {
        **instance.fields,
        "instance_id": instance.instance_id,
        "repo": instance.repo,
        "base_commit": instance.base_commit,
        "problem_statement": instance.problem_statement,
        "hints_text": instance.hints_text,
        "workspace": str(workspace),
    }
    return _FIELD.sub(lambda m: _value(values, m.group(1), instance.instance_id), template)


def _value(values: Mapping[str, Any], name: str, instance_id: str) -> str:
    if name not in values:
        raise ConfigError(
            f"the prompt template uses {{{{{name}}}}}, which instance {instance_id} does not have"
        )
    value = values[name]
    return value if isinstance(value, str) else str(value)


def system_prompt(workspace: Path, tool_names: Iterable[str]) -> str:
    return _SYSTEM.format(tools=", ".join(tool_names), date=date.today().isoformat(), workspace=workspace)
