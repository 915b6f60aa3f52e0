# Which git commands only read the work tree and the shape of history (status, log without patches, diff of named
# files): anything that prints file contents from history, runs a program, writes or talks to a remote is asked.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kgent.permissions.options import Parsed, Table, parse, table

# `git [global options] <subcommand>`: only these global options are understood.
GLOBAL: Final = table(
    "--no-pager/-P --no-optional-locks --literal-pathspecs --no-replace-objects --version --help "
    "!-p/--paginate !-c= !-C= !--git-dir= !--work-tree= !--namespace= !--exec-path[=] !--config-env= "
    "!--bare !--glob-pathspecs !--noglob-pathspecs !--icase-pathspecs !--super-prefix=",
    permute=False,
)

_COLOR = "--color[=] --no-color"
_STAT = "--stat[=] --numstat --shortstat --name-only --name-status --dirstat[=] --summary --compact-summary"
_DIFF_CONTENT = (
    "-U/--unified= -w/--ignore-all-space -b/--ignore-space-change --ignore-space-at-eol --ignore-blank-lines "
    "--ignore-cr-at-eol --minimal --patience --histogram --diff-algorithm= -R --no-prefix --src-prefix= "
    "--dst-prefix= --relative[=] --no-relative -M/--find-renames[=] --no-renames -C/--find-copies[=] -z "
    "--word-diff[=] --word-diff-regex= --color-words[=] --color-moved[=] --no-color-moved -a/--text "
    "--function-context/-W --inter-hunk-context= --indent-heuristic --no-indent-heuristic --full-index "
    "--abbrev[=] --exit-code --quiet --check -p/-u/--patch -s/--no-patch --no-ext-diff --no-textconv "
    f"{_COLOR} {_STAT}"
)
_LOG = (
    "--oneline -n/--max-count= --skip= --since/--after= --until/--before= --author= --committer= --grep= "
    "--all-match --invert-grep -i/--regexp-ignore-case -E/--extended-regexp -F/--fixed-strings --graph "
    "--decorate[=] --no-decorate --all --branches[=] --tags[=] --remotes[=] --first-parent --merges --no-merges "
    "--min-parents= --max-parents= --reverse --date= --format= --pretty[=] --abbrev-commit --no-abbrev-commit "
    "--abbrev[=] --follow --relative-date --topo-order --date-order --author-date-order --left-right "
    "--cherry-pick --cherry-mark --boundary --ancestry-path --simplify-by-decoration --no-walk[=] --do-walk "
    "--parents --children -z --walk-reflogs/-g --mailmap --no-mailmap --use-mailmap --log-size --show-signature "
    "--notes[=] --no-notes --encoding= --expand-tabs[=] --no-expand-tabs --count --no-renames "
    f"{_COLOR} {_STAT} "
    "!-p/-u/--patch !-S= !-G= !--pickaxe-all !--pickaxe-regex !-L= !--full-diff !-m !-c !--cc "
    "!--diff-merges= !--word-diff[=] !--ext-diff !--textconv !--output= !--binary !--raw !--patch-with-stat "
    "!--patch-with-raw !--find-object= !-U/--unified= !--function-context/-W !--remerge-diff"
)


@dataclass(frozen=True, slots=True)
class Reading:
    """A git subcommand's words as the classifier sees them: paths to check, or why it is asked.

    `maybe_paths` are operands git takes as paths when such a file exists and as revisions otherwise; a revision is
    fine only when `revisions_ok` (the command shows no file contents from it). With `files_only`, a path naming a
    directory is asked (a diff of a directory would show its protected files' changes)."""

    paths: tuple[str, ...] = ()
    maybe_paths: tuple[str, ...] = ()
    revisions_ok: bool = True
    files_only: bool = False
    problem: str | None = None


_SUBCOMMANDS: Final[Mapping[str, Table]] = {
    "status": table(
        "-s/--short -b/--branch --show-stash --no-show-stash --ahead-behind --no-ahead-behind --porcelain[=] "
        "--long -z/--null -u/--untracked-files[=] --ignored[=] --ignore-submodules[=] --column[=] --no-column "
        "--no-renames -M/--find-renames[=] "
        "!-v/--verbose"
    ),
    "log": table(_LOG, numeric=True),
    "shortlog": table("-n/--numbered -s/--summary -e/--email -c/--committer -w[=] --format= --group= --all"),
    "diff": table(
        f"{_DIFF_CONTENT} --cached/--staged --merge-base "
        "!--no-index !--ext-diff !--textconv !--output= !--binary !--raw !-G= !-S= !--pickaxe-all !--pickaxe-regex"
    ),
    "branch": table(
        "-v/--verbose -q/--quiet -r/--remotes -a/--all -l/--list --show-current --contains= --no-contains= "
        "--merged= --no-merged= --points-at= --sort= --format= -i/--ignore-case --abbrev[=] --no-abbrev "
        f"--column[=] --no-column {_COLOR} "
        "!-d/--delete !-D !-m/--move !-M !-c/--copy !-C !-f/--force !-t/--track[=] !--no-track "
        "!-u/--set-upstream-to= !--unset-upstream !--create-reflog !--edit-description !--recurse-submodules"
    ),
    "rev-parse": table(
        "--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir --git-common-dir "
        "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --abbrev-ref[=] "
        "--short[=] --verify -q/--quiet --symbolic --symbolic-full-name --default= --show-object-format[=] "
        "--branches[=] --tags[=] --all --local-env-vars !--parseopt !--sq-quote !--path-format= !--git-path="
    ),
    "ls-files": table(
        "-z -t -v -f -c/--cached -d/--deleted -m/--modified -o/--others -i/--ignored -s/--stage -k/--killed "
        "--directory --no-empty-directory --eol --empty-directory -u/--unmerged --exclude-standard --full-name "
        "--error-unmatch --abbrev[=] --deduplicate --sparse -x/--exclude= "
        "!-X/--exclude-from= !--exclude-per-directory= !--with-tree= !--format= !--recurse-submodules !--debug "
        "!--resolve-undo"
    ),
    "blame": table(
        "-b --root --show-stats -f/--show-name -n/--show-number -p/--porcelain --line-porcelain -c -t -l -s "
        "-e/--show-email -w --color-lines --color-by-age --minimal -C[=] -M[=] -L= --abbrev[=] --date= "
        "--incremental !--contents= !-S= !--ignore-revs-file= !--ignore-rev= !--progress !--score-debug "
        "!--reverse"
    ),
    "grep": table(
        "--untracked --exclude-standard -v/--invert-match -i/--ignore-case -w/--word-regexp -a/--text -I "
        "-r/--recursive --no-recursive --max-depth= -E/--extended-regexp -G/--basic-regexp -F/--fixed-strings "
        "-P/--perl-regexp -n/--line-number --column -h -H --full-name -l/--files-with-matches/--name-only "
        "-L/--files-without-match -z/--null -o/--only-matching -c/--count --break --heading -C/--context= "
        "-B/--before-context= -A/--after-context= --threads= -p/--show-function -W/--function-context "
        "-e=pattern --and --or --not -q/--quiet --all-match -m/--max-count= "
        f"{_COLOR} "
        "!--cached !--no-index !--textconv !--no-textconv !--recurse-submodules !-O/--open-files-in-pager[=] "
        "!--ext-grep !-f=",
        numeric=True,
    ),
    "describe": table(
        "--all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match= --exclude= "
        "--always --first-parent --dirty[=] --broken[=]"
    ),
}

READ_SUBCOMMANDS: Final = frozenset(_SUBCOMMANDS)


_NAMES_ONLY: Final = frozenset(
    "--stat --numstat --shortstat --name-only --name-status --dirstat --summary --compact-summary --quiet "
    "--exit-code -s".split()
)
_CONTENTS: Final = frozenset("-p --word-diff --color-words --function-context -U".split())


def _has_stat_only(parsed: Parsed) -> bool:
    names = {o.name for o, _ in parsed.options}
    return bool(names & _NAMES_ONLY) and not names & _CONTENTS


def read_git(words: Sequence[str]) -> Reading:
    """How `git <words>` reads (words after `git`): which operands are paths, or why it is asked."""
    top = parse(words, GLOBAL)
    if top.problem:
        return Reading(problem=f"git with {top.problem}")
    if not top.operands:
        return Reading()  # `git`, `git --version`: prints help or a version
    sub, rest = top.operands[0], top.operands[1:]
    tbl = _SUBCOMMANDS.get(sub)
    if tbl is None:
        return Reading(problem=f"git {sub}: a git command that may write, run programs or show file contents")
    before, after = (
        (rest[: rest.index("--")], tuple(rest[rest.index("--") + 1 :])) if "--" in rest else (rest, ())
    )
    parsed = parse(before, tbl)
    if parsed.problem:
        return Reading(problem=f"git {sub} with {parsed.problem}")
    operands = tuple(parsed.operands)
    for operand in (*operands, *after):
        if operand.startswith(":") or "@{" in operand:
            return Reading(problem=f"git {sub} with a pathspec or revision it does not read: {operand}")
    if sub == "grep":
        pattern_given = parsed.values("-e")
        return Reading(
            paths=after, maybe_paths=operands if pattern_given else operands[1:], revisions_ok=False
        )
    if sub == "blame":
        return Reading(paths=after, maybe_paths=operands, revisions_ok=False)
    if sub == "diff":
        if _has_stat_only(parsed):
            return Reading(paths=after, maybe_paths=operands)
        if parsed.has("--cached", "--merge-base"):
            return Reading(problem="git diff --cached shows file contents from the index")
        if not operands and not after:
            return Reading(problem="git diff without named files may show protected files' changes")
        return Reading(paths=after, maybe_paths=operands, revisions_ok=False, files_only=True)
    if sub in ("status", "ls-files"):
        return Reading(paths=(*operands, *after))
    if sub == "branch" and operands and not parsed.has("--list"):
        return Reading(problem="git branch with a name creates a branch")
    # log, shortlog, describe, rev-parse: operands are revisions, and no file contents are shown
    return Reading(paths=after)
