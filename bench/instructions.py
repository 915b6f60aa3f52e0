"""The work itself, without the machine's noise: instructions executed (valgrind's callgrind), floor beside.

Wall and CPU times on these machines move by up to 1.7x within an hour; the number of instructions a process
executes for the same task barely moves (a few tenths of a percent: hash seeds, thread interleaving). So the ratios
of bench/ratios.py and bench/firstrun.py are given here again as instruction counts, under callgrind (~30x slower,
one run each):
- `kgent run --json` against the floor agent (bench/floor.py) and the floor on asyncio (`--asyncio`) at 23 and 103
  model calls, and a model call's instructions (the slope between the two);
- the stdio daemon's first run against its second, the strict way (`agent/run` as soon as `initialize` is
  answered): three processes, up to `initialize`, then through one run, then through two; their differences.

They are not the goals' measure (time is: instructions leave out what the kernel does for a process, cache misses
and waits), but a change that makes Kgent do less shows here at once, on any machine, at any load.

    .venv/bin/python bench/instructions.py [--calls 23 103]

Needs valgrind (`make bench` installs it). Writes bench/results/instructions.json.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from firstrun import Peers, _daemon_run
from ratios import script
from record import record

from daemon import INIT, Pipe
from kgent.testing.daemon_client import daemon_command

RESULTS = Path(__file__).parent / "results" / "instructions.json"
_COLLECTED = re.compile(r"Collected : (\d+)")


class Counted:
    """Each process under callgrind, with a log file of its own for the total (no profile is written)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.count = 0

    def wrap(self, cmd: list[str]) -> tuple[list[str], Path]:
        self.count += 1
        log = self.tmp / f"callgrind-{self.count}.log"
        return [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            f"--log-file={log}",
            *cmd,
        ], log


def total(log: Path) -> int:
    found = _COLLECTED.search(log.read_text())
    if found is None:
        raise SystemExit(f"callgrind wrote no total to {log}:\n{log.read_text()[-2000:]}")
    return int(found.group(1))


def process(b: Peers, counted: Counted, who: str, calls: int) -> int:
    b.task(script(calls))
    ws = b.workspace()
    b.control.post("/_kgent/reset")
    cmd = {
        "floor": b.floor_cmd("openai"),
        "asyncio": [*b.floor_cmd("openai"), "--asyncio"],
        "kgent": b.kgent_cmd(),
    }[who]
    wrapped, log = counted.wrap(cmd)
    subprocess.run(wrapped, cwd=ws, env=b.env("openai"), stdout=subprocess.DEVNULL, check=True, timeout=1800)
    b.check(who, ws, calls)
    return total(log)


def daemon(b: Peers, counted: Counted, runs: int, calls: int) -> int:
    """Instructions of a daemon that answers `initialize`, then runs `runs` runs at once, then exits."""
    b.task(script(calls))
    wrapped, log = counted.wrap(daemon_command())
    pipe = Pipe(wrapped, b.env("openai"))
    pipe.send(INIT)
    pipe.until(0)
    for n in range(runs):
        _daemon_run(b, pipe, calls, n + 1)
    pipe.close()
    return total(log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, nargs=2, default=[23, 103])
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: `make bench` installs it (apt-get install valgrind)")
    few, many = args.calls
    with tempfile.TemporaryDirectory() as tmp:
        b = Peers(Path(tmp))
        counted = Counted(Path(tmp))
        try:
            runs = {
                f"{who}_{n}": process(b, counted, who, n)
                for n in (few, many)
                for who in ("floor", "asyncio", "kgent")
            }
            daemons = [daemon(b, counted, r, few) for r in (0, 1, 2)]
        finally:
            b.close()
    per_call = {
        who: (runs[f"{who}_{many}"] - runs[f"{who}_{few}"]) / (many - few)
        for who in ("floor", "asyncio", "kgent")
    }
    first, second = daemons[1] - daemons[0], daemons[2] - daemons[1]
    ratios = {
        f"kgent run vs floor, {few} calls": runs[f"kgent_{few}"] / runs[f"floor_{few}"],
        f"kgent run vs floor, {many} calls": runs[f"kgent_{many}"] / runs[f"floor_{many}"],
        "a model call, kgent vs floor": per_call["kgent"] / per_call["floor"],
        f"floor on asyncio vs floor, {many} calls": runs[f"asyncio_{many}"] / runs[f"floor_{many}"],
        f"kgent run vs floor on asyncio, {few} calls": runs[f"kgent_{few}"] / runs[f"asyncio_{few}"],
        f"kgent run vs floor on asyncio, {many} calls": runs[f"kgent_{many}"] / runs[f"asyncio_{many}"],
        "a model call, kgent vs floor on asyncio": per_call["kgent"] / per_call["asyncio"],
        "daemon first run vs its second (strict)": first / second,
    }
    print(f"\ninstructions (callgrind; millions), {few} and {many} model calls")
    for n in (few, many):
        print(
            f"  {n} calls: kgent run {runs[f'kgent_{n}'] / 1e6:.0f} M, floor {runs[f'floor_{n}'] / 1e6:.0f} M,"
            f" floor on asyncio {runs[f'asyncio_{n}'] / 1e6:.0f} M"
        )
    print(
        f"  a model call: kgent {per_call['kgent'] / 1e6:.2f} M, floor {per_call['floor'] / 1e6:.2f} M,"
        f" floor on asyncio {per_call['asyncio'] / 1e6:.2f} M"
    )
    print(
        f"  daemon: up to initialize {daemons[0] / 1e6:.0f} M, first run {first / 1e6:.0f} M, "
        f"second run {second / 1e6:.0f} M"
    )
    for name, value in ratios.items():
        print(f"  {name}: {value:.2f}x")
    record(
        RESULTS,
        {
            "calls": [few, many],
            "ratios": {k: round(v, 3) for k, v in ratios.items()},
            "instructions": {
                **runs,
                "kgent_per_call": round(per_call["kgent"]),
                "floor_per_call": round(per_call["floor"]),
                "asyncio_per_call": round(per_call["asyncio"]),
                "daemon_to_initialize": daemons[0],
                "daemon_first_run": first,
                "daemon_second_run": second,
            },
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
