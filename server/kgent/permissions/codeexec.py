# Options that make a program run another program (a repository's script, a configured command): `rg --pre`,
# `git grep -O`, `git fetch --upload-pack`, `find -exec`, `tar -I`, `git -c core.*` …. No rule covers a command that
# uses one — a person sees each such command — and a prefix rule for a program that has them says so on its card.
"""`executing(words)`: the option of one simple command (as words, quotes removed) that runs a program, or None;
`caveat(words)`: what a prefix rule for this program never covers, or None. Stdlib only."""

from __future__ import annotations

from typing import Final

# program (or `git <sub>`) → (long options without dashes, short option letters) that run a program
_LONG: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "rg": (("pre",), ""),
    "git grep": (("open-files-in-pager",), "O"),
    "git fetch": (("upload-pack",), ""),
    "git pull": (("upload-pack",), ""),
    "git clone": (("upload-pack", "config", "template"), "uc"),
    "git ls-remote": (("upload-pack",), ""),
    "git archive": (("exec", "remote"), ""),
    "git push": (("receive-pack", "exec"), ""),
    "git log": (("ext-diff", "textconv"), ""),
    "git show": (("ext-diff", "textconv"), ""),
    "git diff": (("ext-diff", "textconv"), ""),
    "git difftool": (("extcmd", "tool"), "xt"),
    "git rebase": (("exec",), "x"),
    "git submodule": ((), ""),
    "git bisect": ((), ""),
    "tar": (
        (
            "use-compress-program",
            "to-command",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        ),
        "IF",
    ),
    "sort": (("compress-program",), ""),
    "rsync": (("rsh", "rsync-path"), "e"),
    "zip": (("unzip-command",), ""),
}
_FIND: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_GIT_RUNS: Final = {"submodule": "foreach", "bisect": "run"}  # `git submodule foreach …`, `git bisect run …`


def _long_hit(word: str, names: tuple[str, ...]) -> str | None:
    """The option `word` spells (`--pre=x`, an unambiguous-enough prefix `--upload-p`), as getopt_long reads it."""
    if not word.startswith("--") or len(word) <= 2:
        return None
    given = word[2:].partition("=")[0]
    for name in names:
        if name == given or len(given) >= 3 and name.startswith(given):
            return "--" + name
    return None


def _short_hit(word: str, letters: str) -> str | None:
    """A short option cluster (`-O./x.sh`, `-xO`) holding one of `letters` before any glued argument."""
    if not letters or not word.startswith("-") or word.startswith("--") or len(word) < 2:
        return None
    for ch in word[1:]:
        if ch in letters:
            return "-" + ch
        if not ch.isalpha():
            return None
    return None


def _git(words: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """git's subcommand and its words; a `-c` / `--config-env` / `--exec-path` before it runs configured programs."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        if word == "-c" or word.startswith(("-c", "--config-env", "--exec-path")):
            return "-c", ()
        i += 2 if word in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    return (words[i], words[i + 1 :]) if i < len(words) else (None, ())


def executing(words: tuple[str, ...]) -> str | None:
    """The option (or subcommand) of one simple command that makes it run another program; None when it has none."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "find":
        return next((w for w in words[1:] if w in _FIND), None)
    args = words[1:]
    key = program
    if program == "git":
        sub, args = _git(words)
        if sub == "-c":
            return "git -c (configuration that can name programs to run)"
        if sub is None:
            return None
        if sub in _GIT_RUNS and args[:1] == (_GIT_RUNS[sub],):
            return f"git {sub} {_GIT_RUNS[sub]}"
        if sub == "config" and len([a for a in args if not a.startswith("-")]) >= 2:
            return "git config <key> <value> (configuration that can name programs to run)"
        key = f"git {sub}"
    names, letters = _LONG.get(key, ((), ""))
    for word in args:
        if word == "--":
            break
        hit = _long_hit(word, names) or _short_hit(word, letters)
        if hit is not None:
            return hit
    return None


def caveat(words: tuple[str, ...]) -> str | None:
    """What a prefix rule for this command's program never covers (its options that run programs), or None."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "find":
        return ", ".join(sorted(_FIND))
    key = program
    if program == "git":
        sub, _ = _git(words)
        key = f"git {sub}" if sub not in (None, "-c") else "git"
    names, letters = _LONG.get(key, ((), ""))
    shown = [f"--{n}" for n in names] + [f"-{c}" for c in letters]
    if program == "git":
        shown.append("-c")
    return ", ".join(shown) if shown else None
