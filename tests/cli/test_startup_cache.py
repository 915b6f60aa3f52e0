"""The start of a `kgent` process (issue 37): generated methods' bytecode comes from kgent.core.codecache, and is the
bytecode `compile` makes of the same text; no garbage collection while `kgent run` loads.

Real processes: a cold one fills a cache file (in a temporary directory), a warm one defines the same classes from it.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

# argv: CACHE OUT: define dataclasses through the cache at CACHE (or without it: CACHE "-"), write
# what each generated method is (its bytecode, marshalled; its annotations) and what the classes do to OUT.
DEFINE = """import json, marshal, sys
cache, out = sys.argv[1], sys.argv[2]
from pathlib import Path
import kgent.core.codecache as cc
if cache != "-":
    cc.cache_path = lambda name="dataclasses": Path(f"{cache}.{name}")
    cc.install()
import dataclasses
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, hash=False, compare=False)

@dataclass
class Plain:
    a: int
    b: "list[int]" = field(default_factory=list)

@dataclass(eq=True, unsafe_hash=True)
class Hashed:
    x: int

methods = {}
for cls in (Frozen, Plain, Hashed):
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        fn = cls.__dict__.get(name)
        code = getattr(fn, "__code__", None)
        if code is not None:
            methods[f"{cls.__name__}.{name}"] = [marshal.dumps(code).hex(), repr(fn.__annotations__)]
f = Frozen(name="n", count=2, tags=("t",))
try:
    f.count = 3
    frozen = "assignable"
except dataclasses.FrozenInstanceError as exc:
    frozen = str(exc)
behaviour = [repr(f), f == Frozen(name="n", count=2, tags=("t",)), hash(f) == hash(Frozen(name="n", count=2, tags=("t",))),
             frozen, repr(Plain(1)), Hashed(2) == Hashed(2), hash(Hashed(3)) == hash(Hashed(3))]
added = cc._dataclasses.added
cc.save()
json.dump({"methods": methods, "behaviour": behaviour, "added": added, "hits": cc._dataclasses.hits,
           "entries": len(cc._dataclasses.entries)}, open(out, "w"))
"""


def _define(tmp_path: Path, cache: str, name: str, *, write: bool = True) -> dict:
    out = tmp_path / f"{name}.json"
    # one seed for every process (as a hash in generated text would need); bytecode is written unless the environment
    # says not to (as for .pyc files)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONHASHSEED="37", **({} if write else {"PYTHONDONTWRITEBYTECODE": "1"}))
    subprocess.run(
        [sys.executable, "-c", DEFINE, cache, str(out)],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.read_text())


def _code(found: dict) -> dict[str, tuple[CodeType, str]]:
    """The generated methods as code objects (equal when their bytecode, constants, names and lines are: marshal's
    bytes themselves may differ with how objects happened to be shared)."""
    return {
        name: (marshal.loads(bytes.fromhex(code)), notes) for name, (code, notes) in found["methods"].items()
    }


def test_methods_from_the_cache_are_the_ones_compile_makes(tmp_path: Path) -> None:
    cache = tmp_path / "codecache.bin"
    plain = _define(tmp_path, "-", "plain")  # no cache: the interpreter's own dataclasses
    cold = _define(tmp_path, str(cache), "cold")
    assert cold["entries"] > 0 and cold["hits"] == 0
    assert Path(f"{cache}.dataclasses").is_file()
    warm = _define(tmp_path, str(cache), "warm")
    assert warm["added"] == 0 and warm["hits"] >= 10  # every generated method came from the files
    assert set(plain["methods"]) >= {
        "Frozen.__init__",
        "Frozen.__setattr__",
        "Plain.__init__",
        "Hashed.__hash__",
    }
    assert _code(cold) == _code(plain)  # the same code objects, the same (evaluated) annotations
    assert _code(warm) == _code(plain)
    assert cold["behaviour"] == warm["behaviour"] == plain["behaviour"]
    assert plain["behaviour"][3] == "cannot assign to field 'count'"


def test_no_cache_is_written_where_no_bytecode_is_to_be(tmp_path: Path) -> None:
    cache = tmp_path / "codecache.bin"
    found = _define(tmp_path, str(cache), "cold", write=False)
    assert found["added"] > 0 and not list(tmp_path.glob("codecache.bin*"))


def test_a_cache_of_another_interpreter_or_a_broken_one_counts_as_empty(tmp_path: Path) -> None:
    cache = tmp_path / "codecache.bin"
    for junk in (b"", b"not a cache", b"\x00" * 64):
        Path(f"{cache}.dataclasses").write_bytes(junk)
        again = _define(tmp_path, str(cache), "junk")
        assert again["added"] > 0 and _code(again) == _code(_define(tmp_path, "-", "plain"))


def test_the_kgent_process_installs_the_cache_and_a_library_import_does_not() -> None:
    code = (
        "import dataclasses, builtins, sys\n"
        "import kgent, kgent.kernel\n"
        "print(dataclasses.__dict__.get('exec') is None)\n"
        "from kgent.cli.main import main\n"
        "sys.argv = ['kgent', 'run', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "import gc\n"
        "print(dataclasses.__dict__.get('exec') is not None, gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split()[0] == "True"  # importing the library changes nothing
    assert done.stdout.split()[-3:] == [
        "True",
        "True",
        "True",
    ]  # the command: cache, collector back on, start frozen


# argv: "process" | "library": import the daemon's server as its loader does (kgent.daemon.boot), in a `kgent` process
# or as a library user; print what the collector did meanwhile.
LOADER_PROBE = (
    "import gc, json, sys\n"
    "from kgent.core import loading\n"
    "if sys.argv[1] == 'process':\n"
    "    loading.start_process()\n"
    "seen = []\n"
    "gc.callbacks.append(lambda phase, info: phase == 'start' and seen.append(info['generation']))\n"
    "from kgent.daemon.boot import _Loader\n"
    "seen.clear()\n"
    "loader = _Loader()\n"
    "loader.start(); loader.join()\n"
    "assert loader.error is None, loader.error\n"
    "print(json.dumps({'collections': len(seen), 'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count(),\n"
    "                  'pydantic': 'pydantic' in sys.modules, 'pygls': 'pygls' in sys.modules}))\n"
)


def test_the_daemons_load_pauses_the_collector_and_freezes_what_it_built() -> None:
    """The daemon's loader (kgent.daemon.boot) builds its ~0.2 s of modules with the collector paused, then freezes
    them (kgent.core.loading); pygls is not among them (docs/adr/0006). A library import changes nothing."""

    def probe(kind: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", LOADER_PROBE, kind],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        result: dict[str, object] = json.loads(done.stdout)
        return result

    process = probe("process")
    assert process["collections"] == 0 and process["enabled"], process
    assert isinstance(process["frozen"], int) and process["frozen"] > 10_000, process
    assert process["pydantic"] and not process["pygls"], process  # it did load the server, and not pygls
    library = probe("library")
    assert library["collections"] and library["enabled"] and library["frozen"] == 0, library
