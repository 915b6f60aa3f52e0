# The programs a shell command may run unasked, with every option they are known to have (from their --help and
# man pages): options marked `!` write, execute, follow symlinks out or read from elsewhere, and are asked.

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from kgent.permissions.options import Parsed, Table, table

# How a program's operands are read: all paths; a pattern first (unless an option gave one), then paths; plain text;
# at most one path (uniq's second operand is its output file); none at all.
Operands = Literal["paths", "pattern", "text", "one-path", "none", "program"]


@dataclass(frozen=True, slots=True)
class Program:
    """A read-only program: its option table, how its operands are read, and any check of its own."""

    table: Table
    operands: Operands = "paths"
    check: Callable[[Parsed], str | None] | None = None


def _p(
    spec: str, operands: Operands = "paths", check: Callable[[Parsed], str | None] | None = None, **kw: bool
) -> Program:
    return Program(table(spec, **kw), operands, check)


_COLOR = "--color/--colour[=]"

GREP = _p(
    "-E/--extended-regexp -F/--fixed-strings -G/--basic-regexp -P/--perl-regexp -e/--regexp=pattern "
    "-f/--file=patternfile -i/--ignore-case --no-ignore-case -w/--word-regexp -x/--line-regexp -z/--null-data "
    "-s/--no-messages -v/--invert-match -V/--version --help -m/--max-count= -b/--byte-offset -n/--line-number "
    "--line-buffered -H/--with-filename -h/--no-filename --label= -o/--only-matching -q/--quiet/--silent "
    "--binary-files= -a/--text -I -r/--recursive --include= --exclude= --exclude-from=path --exclude-dir= "
    "-L/--files-without-match -l/--files-with-matches -c/--count -T/--initial-tab -Z/--null "
    "-B/--before-context= -A/--after-context= -C/--context= --group-separator= --no-group-separator "
    f"{_COLOR} -U/--binary "
    "!-R/--dereference-recursive !-d/--directories= !-D/--devices=",
    "pattern",
    numeric=True,
)

RG = _p(
    "-e/--regexp=pattern -f/--file=patternfile -i/--ignore-case -S/--smart-case -s/--case-sensitive -w/--word-regexp "
    "-x/--line-regexp -F/--fixed-strings -n/--line-number -N/--no-line-number -l/--files-with-matches "
    "--files-without-match -c/--count --count-matches -v/--invert-match -o/--only-matching -m/--max-count= "
    "-A/--after-context= -B/--before-context= -C/--context= -g/--glob= --iglob= -t/--type= -T/--type-not= "
    "--type-list --hidden --no-hidden -u/--unrestricted --no-ignore --no-ignore-vcs --no-ignore-dot "
    "--no-ignore-parent --no-ignore-global --no-ignore-exclude --ignore-file=path --files -d/--max-depth= "
    "--json --color= --colors= --no-heading --heading -H/--with-filename -I/--no-filename --column --no-column "
    "--vimgrep -U/--multiline --multiline-dotall -P/--pcre2 --engine= --sort= --sortr= -0/--null -q/--quiet "
    "--trim -M/--max-columns= --max-columns-preview --stats -p/--pretty -a/--text -b/--byte-offset "
    "-r/--replace= --passthru --no-messages --null-data --one-file-system -j/--threads= --max-filesize= "
    "-h/--help -V/--version --no-config "
    "!-L/--follow !--pre= !--pre-glob= !-z/--search-zip !--debug !--trace",
    "pattern",
    abbreviate=False,
)

CAT = _p(
    "-A/--show-all -b/--number-nonblank -e -E/--show-ends -n/--number -s/--squeeze-blank -t -T/--show-tabs -u "
    "-v/--show-nonprinting --help --version"
)
HEAD = _p(
    "-c/--bytes= -n/--lines= -q/--quiet/--silent -v/--verbose -z/--zero-terminated --help --version",
    numeric=True,
)
TAIL = _p(
    "-c/--bytes= -n/--lines= -q/--quiet/--silent -v/--verbose -z/--zero-terminated --help --version "
    "!-f/--follow[=] !-F !--max-unchanged-stats= !--pid= !--retry !-s/--sleep-interval=",
    numeric=True,
)
WC = _p("-c/--bytes -m/--chars -l/--lines -L/--max-line-length -w/--words --help --version !--files0-from=")
LS = _p(
    "-a/--all -A/--almost-all --author -b/--escape --block-size= -B/--ignore-backups -c -C --color[=] "
    "-d/--directory -D/--dired -f -F/--classify[=] --file-type --format= --full-time -g --group-directories-first "
    "-G/--no-group -h/--human-readable --si -H/--dereference-command-line --dereference-command-line-symlink-to-dir "
    "--hide= --hyperlink[=] --indicator-style= -i/--inode -I/--ignore= -k/--kibibytes -l -m -n/--numeric-uid-gid "
    "-N/--literal -o -p -q/--hide-control-chars --show-control-chars -Q/--quote-name --quoting-style= -r/--reverse "
    "-R/--recursive -s/--size -S --sort= --time= --time-style= -t -T/--tabsize= -u -U -v -w/--width= -x -X "
    "-Z/--context --zero -1 --help --version !-L/--dereference"
)
STAT = _p("-L/--dereference -f/--file-system --cached= -c/--format= --printf= -t/--terse --help --version")
FILE = _p(
    "--help -v/--version -m/--magic-file=path -b/--brief -c/--checking-printout -e/--exclude= --exclude-quiet= "
    "-F/--separator= -i/--mime --apple --extension --mime-type --mime-encoding -k/--keep-going -l/--list "
    "-L/--dereference -h/--no-dereference -n/--no-buffer -N/--no-pad -0/--print0 -P/--parameter= -r/--raw "
    "-d/--debug "
    "!-z/--uncompress !-Z/--uncompress-noreport !-f/--files-from= !-p/--preserve-date !-s/--special-files "
    "!-S/--no-sandbox !-C/--compile"
)
SORT = _p(
    "-b/--ignore-leading-blanks -d/--dictionary-order -f/--ignore-case -g/--general-numeric-sort "
    "-i/--ignore-nonprinting -M/--month-sort -h/--human-numeric-sort -n/--numeric-sort -R/--random-sort "
    "--random-source=path -r/--reverse --sort= -V/--version-sort --batch-size= -c/--check[=] -C --debug "
    "-k/--key= -m/--merge -s/--stable -S/--buffer-size= -t/--field-separator= --parallel= -u/--unique "
    "-z/--zero-terminated --help --version "
    "!--compress-program= !--files0-from= !-o/--output= !-T/--temporary-directory="
)
UNIQ = _p(
    "-c/--count -d/--repeated -D --all-repeated[=] -f/--skip-fields= --group[=] -i/--ignore-case -s/--skip-chars= "
    "-u/--unique -z/--zero-terminated -w/--check-chars= --help --version",
    "one-path",
)
CUT = _p(
    "-b/--bytes= -c/--characters= -d/--delimiter= -f/--fields= -n --complement -s/--only-delimited "
    "--output-delimiter= -z/--zero-terminated --help --version"
)
NL = _p(
    "-b/--body-numbering= -d/--section-delimiter= -f/--footer-numbering= -h/--header-numbering= "
    "-i/--line-increment= -l/--join-blank-lines= -n/--number-format= -p/--no-renumber -s/--number-separator= "
    "-v/--starting-line-number= -w/--number-width= --help --version"
)
TAC = _p("-b/--before -r/--regex -s/--separator= --help --version")
SUMS = _p("-b/--binary -t/--text -z/--zero --tag --help --version !-c/--check")
DU = _p(
    "-0/--null -a/--all --apparent-size -B/--block-size= -b/--bytes -c/--total -D/--dereference-args "
    "-d/--max-depth= -H -h/--human-readable --inodes -k -l/--count-links -m -P/--no-dereference -S/--separate-dirs "
    "--si -s/--summarize -t/--threshold= --time[=] --time-style= --exclude= -x/--one-file-system --help --version "
    "!--files0-from= !-L/--dereference !-X/--exclude-from="
)
DIFF = _p(
    "--normal -q/--brief -s/--report-identical-files -c -C= --context[=] -u -U= --unified[=] -e/--ed -n/--rcs "
    "-y/--side-by-side -W/--width= --left-column --suppress-common-lines -p/--show-c-function "
    "-F/--show-function-line= --label= -t/--expand-tabs -T/--initial-tab --tabsize= --suppress-blank-empty "
    "-r/--recursive --no-dereference -N/--new-file --unidirectional-new-file --ignore-file-name-case "
    "--no-ignore-file-name-case -x/--exclude= -X/--exclude-from=path -S/--starting-file= --from-file=path "
    "--to-file=path -i/--ignore-case -E/--ignore-tab-expansion -Z/--ignore-trailing-space "
    "-b/--ignore-space-change -w/--ignore-all-space -B/--ignore-blank-lines -I/--ignore-matching-lines= -a/--text "
    "--strip-trailing-cr -D/--ifdef= --line-format= -d/--minimal --horizon-lines= --speed-large-files "
    "--color[=] --palette= --help -v/--version !-l/--paginate"
)
CMP = _p(
    "-b/--print-bytes -i/--ignore-initial= -l/--verbose -n/--bytes= -s/--quiet/--silent --help -v/--version"
)
REALPATH = _p(
    "-e/--canonicalize-existing -m/--canonicalize-missing -L/--logical -P/--physical -q/--quiet "
    "--relative-to=path --relative-base=path -s/--strip/--no-symlinks -z/--zero --help --version"
)
BASENAME = _p("-a/--multiple -s/--suffix= -z/--zero --help --version", "text")
DIRNAME = _p("-z/--zero --help --version", "text")
ECHO = _p("", "text", permute=False)
PWD = _p("-L -P", "none")
TREE = _p(
    "-a -d -f -F -i -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -v -t -c -U -r --dirsfirst -C -n -A -S -L= "
    "-P= -I= --ignore-case --matchdirs --prune --noreport --charset= --filelimit= -x -J -X --help --version "
    "--gitignore !-l !-o= !-R !--fromfile !-H="
)
PYTHON = _p("-V/--version", "none", abbreviate=False)

_SED_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/\\\n])*/I?)"
_SED_S = r"s([^\w\s\\;{}])(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiIm0-9]*"
_SED_CMD = re.compile(rf"\s*(?:{_SED_ADDR}(?:\s*,\s*{_SED_ADDR})?)?\s*!?\s*(?:[pdqQ=lnN]|{_SED_S})\s*")


def _sed_check(parsed: Parsed) -> str | None:
    scripts = parsed.values("-e") or parsed.operands[:1]
    for script in scripts:
        for command in re.split(r"[;\n]", script):
            if command.strip() and not _SED_CMD.fullmatch(command):
                return f"a sed script it does not read as print-only: {command.strip()[:40]!r}"
    return None


SED = _p(
    "-n/--quiet/--silent --debug -e/--expression=pattern --posix -E/-r/--regexp-extended -s/--separate "
    "-u/--unbuffered -z/--null-data -l/--line-length= --sandbox --help --version "
    "!-f/--file= !--follow-symlinks !-i/--in-place[=] !-b/--binary",
    "pattern",
    _sed_check,
)

# awk programs: anything that writes, runs, reads other files or opens a pipe is asked.
_AWK_RISKY = re.compile(r"[|>@]|\b(?:system|getline|close|fflush|ENVIRON|PROCINFO|printf?\s*>)\b")


def _awk_check(parsed: Parsed) -> str | None:
    if not parsed.operands:
        return "an awk call without a program"
    if _AWK_RISKY.search(parsed.operands[0]):
        return "an awk program that may run commands, write or read other files"
    return None


AWK = _p("-F= -v= --version !-f !-W= !-E=", "program", _awk_check, permute=False, abbreviate=False)

PROGRAMS: Final[Mapping[str, Program]] = {
    "cat": CAT,
    "head": HEAD,
    "tail": TAIL,
    "wc": WC,
    "ls": LS,
    "stat": STAT,
    "file": FILE,
    "grep": GREP,
    "egrep": GREP,
    "fgrep": GREP,
    "rg": RG,
    "sort": SORT,
    "uniq": UNIQ,
    "cut": CUT,
    "nl": NL,
    "tac": TAC,
    "md5sum": SUMS,
    "sha1sum": SUMS,
    "sha256sum": SUMS,
    "sha512sum": SUMS,
    "du": DU,
    "diff": DIFF,
    "cmp": CMP,
    "realpath": REALPATH,
    "basename": BASENAME,
    "dirname": DIRNAME,
    "echo": ECHO,
    "printf": ECHO,
    "pwd": PWD,
    "true": ECHO,
    "false": ECHO,
    "tree": TREE,
    "sed": SED,
    "awk": AWK,
    "mawk": AWK,
    "gawk": AWK,
    "python": PYTHON,
    "python3": PYTHON,
}

# find: the expression's primaries by how many arguments they take; `!` ones run, write, delete or follow links.
FIND_OPTIONS: Final = frozenset({"-H", "-P"})
FIND_PRIMARIES: Final[Mapping[str, int]] = {
    **dict.fromkeys(
        "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -maxdepth "
        "-mindepth -size -mtime -mmin -atime -amin -ctime -cmin -used -perm -user -group -uid -gid -links -inum "
        "-regextype -printf -context".split(),
        1,
    ),
    **dict.fromkeys(
        "-empty -print -print0 -ls -prune -quit -true -false -not ! -a -and -o -or ( ) , -depth -readable "
        "-writable -executable -nouser -nogroup -daystart -xdev -mount -noleaf -ignore_readdir_race "
        "-noignore_readdir_race -d".split(),
        0,
    ),
}
FIND_PATH_PRIMARIES: Final = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
FIND_DENIED: Final = frozenset(
    "-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls -L -follow -files0-from -D".split()
)
