# The rule files: `[permissions] allow = [...] deny = [...]` in the user's config.toml, in a project's
# .kgent/config.toml, and in the user's own file for a project (`<user config dir>/projects/<name>-<hash>.toml`:
# where "always in this project" goes while the project is not trusted, since the project's own allows would not
# count then; the user wrote them, so they count whether or not the project is trusted). Re-read when they change (mtime, size, inode), so an edit by hand or by another front applies
# to the next call. A rule that cannot be read is reported (file and rule) and left out; the others still load.
#
# Writing keeps every other table, key and comment of the file: only the text of the `[permissions]` table is
# replaced (its own comments are not kept), then the file is checked to read back the same everywhere else and
# replaced atomically (a temporary file in the same directory, then rename). Every read and write goes through the
# files gate: a project's file that links outside the workspace (or to a secret) is neither read nor written.

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kgent.core.paths import is_trusted, user_config_dir
from kgent.files import gate
from kgent.files.audit import gated
from kgent.permissions.rules import Scoped
from kgent.permissions.rulesyntax import Decision, Rule, RuleError, RuleScope, parse_rule

log = logging.getLogger("kgent.permissions")

TABLE: Final = "permissions"
_HEADER_RE: Final = re.compile(r"^[ \t]*\[[ \t]*permissions[ \t]*\][ \t]*(#.*)?$")
_ANY_HEADER_RE: Final = re.compile(r"^[ \t]*\[")


@dataclass(frozen=True, slots=True)
class FileRules:
    """What one file holds: its allow and deny rules, and the problems of the rules left out."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    problems: tuple[str, ...] = ()


class RuleFile:
    """One config.toml's `[permissions]` table, read and written through the files gate under `root` (the
    workspace for a project's file; the user's config dir, whose files may link anywhere but to a secret)."""

    def __init__(
        self, path: Path, preamble: str = "", *, root: Path | None = None, own: bool = False
    ) -> None:
        self.path = path
        self.preamble = preamble  # the first lines of a file this creates (a comment saying what it is)
        self.root = root if root is not None else path.parent
        self.own = own  # the user's own file: outside_ok
        self._key: tuple[int, int, int] | None = None
        self._rules = FileRules()

    def read_text(self) -> str:
        """The file's text through the gate (FileNotFoundError when absent; OSError, gate.Refused included)."""
        data, _ = gate.read_file(self.root, self.path, limit=1 << 20, outside_ok=self.own)
        return data.decode("utf-8")

    def load(self) -> FileRules:
        """The file's rules, read again only when the file changed."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._key, self._rules = None, FileRules()
            return self._rules
        except OSError as exc:
            return FileRules(problems=(f"{self.path}: cannot read it: {exc.strerror}",))
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        if key != self._key:
            self._rules = self._read()
            self._key = key
            for problem in self._rules.problems:
                log.warning("%s", problem)
        return self._rules

    def _read(self) -> FileRules:
        import tomllib  # at the first file read: the module's import is ~14 ms of CPU

        try:
            data = tomllib.loads(self.read_text())
        except OSError as exc:
            return FileRules(problems=(f"{self.path}: cannot read it: {exc.strerror}",))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            return FileRules(problems=(f"{self.path} is not valid TOML ({exc}): none of its rules apply",))
        table = data.get(TABLE, {})
        if not isinstance(table, dict):
            return FileRules(problems=(f"{self.path}: [{TABLE}] must be a table",))
        problems: list[str] = []
        found: dict[Decision, list[Rule]] = {"allow": [], "deny": []}
        for decision in ("allow", "deny"):
            items = table.get(decision, [])
            if not isinstance(items, list):
                problems.append(f"{self.path}: [{TABLE}] {decision} must be a list of rules")
                continue
            for item in items:
                try:
                    found[decision].append(parse_rule(item, decision))
                except RuleError as exc:
                    problems.append(f"{self.path}: [{TABLE}] {decision}: {exc}")
        return FileRules(allow=tuple(found["allow"]), deny=tuple(found["deny"]), problems=tuple(problems))

    def texts(self, decision: Decision) -> list[str]:
        """The rule strings of the file as written (unreadable ones too), for rewriting."""
        import tomllib  # at the first file read: the module's import is ~14 ms of CPU

        try:
            data = tomllib.loads(self.read_text())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RuleError(f"{self.path}: cannot read it: {exc.strerror}") from None
        table = data.get(TABLE, {})
        items = table.get(decision, []) if isinstance(table, dict) else []
        return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []

    def add(self, rule: Rule) -> bool:
        """Add the rule (False: it was there already)."""
        decision = rule.decision
        texts = self.texts(decision)
        if any(_same(t, rule) for t in texts):
            return False
        self._write({decision: [*texts, rule.text]})
        return True

    def remove(self, rule: Rule) -> bool:
        """Remove the rule (False: it was not there)."""
        decision = rule.decision
        texts = self.texts(decision)
        kept = [t for t in texts if not _same(t, rule)]
        if len(kept) == len(texts):
            return False
        self._write({decision: kept})
        return True

    def _write(self, lists: Mapping[str, list[str]]) -> None:
        import tomllib  # at the first file read: the module's import is ~14 ms of CPU

        try:
            text = self.read_text()
        except FileNotFoundError:
            text = self.preamble
        except OSError as exc:
            raise RuleError(f"{self.path}: cannot read it: {exc.strerror}") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RuleError(f"{self.path} is not valid TOML ({exc}); fix it by hand first") from None
        table = data.get(TABLE, {})
        if not isinstance(table, dict):
            raise RuleError(f"{self.path}: [{TABLE}] is not a table; fix it by hand first")
        new_table: dict[str, Any] = {**table, **lists}
        body = _render(new_table, self.path)
        lines = text.splitlines(keepends=True)
        start = next((i for i, line in enumerate(lines) if _HEADER_RE.match(line.rstrip("\r\n"))), None)
        if start is None:
            if TABLE in data:
                raise RuleError(
                    f"{self.path}: the permissions are not written as a [{TABLE}] table; edit them by hand"
                )
            sep = "" if not text or text.endswith("\n") else "\n"
            new_text = text + sep + ("\n" if text.strip() else "") + f"[{TABLE}]\n" + body
        else:
            end = next(
                (j for j in range(start + 1, len(lines)) if _ANY_HEADER_RE.match(lines[j])),
                len(lines),
            )
            tail = "".join(lines[end:])
            new_text = "".join(lines[: start + 1]) + body + ("\n" if tail else "") + tail
        try:
            check = tomllib.loads(new_text)
        except tomllib.TOMLDecodeError as exc:
            raise RuleError(
                f"{self.path}: cannot rewrite [{TABLE}] safely ({exc}); edit it by hand"
            ) from None
        if {k: v for k, v in check.items() if k != TABLE} != {
            k: v for k, v in data.items() if k != TABLE
        } or check.get(TABLE) != new_table:
            raise RuleError(
                f"{self.path}: cannot rewrite [{TABLE}] without changing the rest; edit it by hand"
            )
        try:  # the person's answer chose this file: configuration, but seen
            target = gate.admit(self.root, self.path, write=True, outside_ok=self.own, protected_ok=True)
        except gate.Refused as refused:
            raise RuleError(f"{self.path}: {refused.reason}") from None
        with gated():
            target.abs.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.abs.with_name(f".{target.abs.name}.{os.getpid()}.tmp")
            tmp.write_text(new_text, encoding="utf-8")
            if target.abs.exists():
                os.chmod(tmp, target.abs.stat().st_mode & 0o7777)
            tmp.replace(target.abs)


def _same(text: str, rule: Rule) -> bool:
    try:
        other = parse_rule(text, rule.decision)
    except RuleError:
        return text.strip() == rule.text
    return (other.tool, other.spec) == (rule.tool, rule.spec)


def _render(table: Mapping[str, Any], path: Path) -> str:
    out: list[str] = []
    for key, value in table.items():
        if isinstance(value, dict):
            continue  # a [permissions.sub] table stays where it is
        name = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if not value:
                out.append(f"{name} = []\n")
            else:
                items = "".join(f"    {json.dumps(v, ensure_ascii=False)},\n" for v in value)
                out.append(f"{name} = [\n{items}]\n")
        elif isinstance(value, (str, bool, int)):
            out.append(f"{name} = {json.dumps(value, ensure_ascii=False)}\n")
        else:
            raise RuleError(f"{path}: [{TABLE}] {key} is not a value Kgent can rewrite; edit it by hand")
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _personal_name(where: str) -> str:
    """The file name of the user's own rules for the project at the resolved path `where`: its folder's name and a
    hash of the path (kept: it is asked for every tool call)."""
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(where).name)[:40] or "root"
    return f"{name}-{digest}.toml"


class RuleFiles:
    """The user's and the projects' rule files. A project's allows count only when the project is trusted
    (`trusted`, by default the trust file of `kgent extensions --trust`); its denies always do."""

    def __init__(
        self, env: Mapping[str, str] | None = None, trusted: Callable[[Path], bool] | None = None
    ) -> None:
        self.env = env
        self.trusted: Callable[[Path], bool] = trusted or (lambda project: is_trusted(project, self.env))
        self._files: dict[Path, RuleFile] = {}

    def user_path(self) -> Path:
        return user_config_dir(self.env) / "config.toml"

    @staticmethod
    def project_path(workspace: Path) -> Path:
        return workspace / ".kgent" / "config.toml"

    def personal_path(self, workspace: Path) -> Path:
        """The user's own rules for this project: in their config dir, named by the project's folder and a hash of
        its path."""
        return user_config_dir(self.env) / "projects" / _personal_name(str(workspace.resolve()))

    def path(self, scope: RuleScope, workspace: Path) -> Path:
        return self.user_path() if scope == "user" else self.project_path(workspace)

    def file(self, scope: RuleScope, workspace: Path) -> RuleFile:
        if scope == "user":
            return self._file(self.user_path(), root=user_config_dir(self.env), own=True)
        return self._file(self.project_path(workspace), root=workspace)

    def personal(self, workspace: Path) -> RuleFile:
        where = str(workspace.resolve())  # once: it is asked for twice every tool call
        config = user_config_dir(self.env)
        path = config / "projects" / _personal_name(where)
        found = self._files.get(path)
        if found is not None:
            return found
        # The path as a JSON string: a folder name with a newline must not end the comment and add TOML of its own.
        preamble = f"# Kgent: your own permission rules for {json.dumps(where, ensure_ascii=True)} (not in the project)\n"
        return self._file(path, preamble, root=config, own=True)

    def writable(self, scope: RuleScope, workspace: Path) -> RuleFile:
        """Where a rule of `scope` is written: a project rule goes to the project's file while the project is
        trusted, else to the user's own file for it (so that an allow counts at once)."""
        if scope == "project" and not self.is_trusted(workspace):
            return self.personal(workspace)
        return self.file(scope, workspace)

    def project_files(self, workspace: Path) -> tuple[RuleFile, RuleFile]:
        """The project's file and the user's own file for the project: the two homes of its project rules."""
        return self.file("project", workspace), self.personal(workspace)

    def _file(self, path: Path, preamble: str = "", *, root: Path, own: bool = False) -> RuleFile:
        found = self._files.get(path)
        if found is None:
            found = self._files[path] = RuleFile(path, preamble, root=root, own=own)
        return found

    def is_trusted(self, workspace: Path) -> bool:
        try:
            return bool(self.trusted(workspace))
        except OSError:
            return False

    def scoped(self, workspace: Path) -> list[Scoped]:
        """The rules in force for `workspace`: denies first (they win), then the allows that count."""
        user = self.file("user", workspace).load()
        project = self.file("project", workspace).load()
        personal = self.personal(workspace).load()
        out = [Scoped(r, "project") for r in (*project.deny, *personal.deny)]
        out += [Scoped(r, "user") for r in user.deny]
        out += [Scoped(r, "project") for r in personal.allow]
        out += [Scoped(r, "user") for r in user.allow]
        # the trust list is read only when it matters (every tool call asks for these rules)
        if project.allow and self.is_trusted(workspace):
            out += [Scoped(r, "project") for r in project.allow]
        return out

    def problems(self, workspace: Path) -> list[str]:
        return [
            *self.file("user", workspace).load().problems,
            *self.file("project", workspace).load().problems,
            *self.personal(workspace).load().problems,
        ]
