"""The package's layers, enforced: every import of kgent.X from kgent.Y must point down (or stay inside Y).

core < files, session, providers < sandbox, changes < tools < permissions, lsp < context < kernel < ext, config < service
< fronts (daemon, http, acp, swebench) < cli, testing. Packages of one layer do not import each other. Every import counts: module level, inside
functions and under TYPE_CHECKING alike. There is no exception list: a new edge against the order fails here.

The fronts a person uses (daemon, http, acp, cli) import nothing from kgent.kernel: they start runs and read sessions
through kgent.service. The demo scenarios are the one named exception (they show the kernel embedded as a library).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import kgent

PACKAGE = Path(kgent.__file__).resolve().parent

LAYERS: dict[str, int] = {
    "core": 0,
    "files": 1,
    "session": 1,
    "providers": 1,
    "sandbox": 2,
    "changes": 2,
    "tools": 3,
    "permissions": 4,
    "lsp": 4,  # language servers Kgent runs for diagnostics: over the sandbox, under the kernel
    "context": 5,
    "kernel": 6,
    "ext": 7,
    "config": 7,  # below the shared service, which builds runs from it
    "service": 8,
    "daemon": 9,
    "http": 9,
    "acp": 9,
    "swebench": 9,
    "cli": 10,
    "testing": 10,
    "__main__": 11,
}


def _part(module: Path, package: Path = PACKAGE) -> str:
    rel = module.relative_to(package)
    return rel.parts[0].removesuffix(".py")


def _imports(module: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    tree = ast.parse(module.read_text(), str(module))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                parents = module.relative_to(package).parent.parts
                base = parents[: len(parents) - (node.level - 1)]
                name = ".".join(["kgent", *base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            if name == "kgent":  # `from kgent import core` names packages
                found += [(node.lineno, f"kgent.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name == "kgent" or name.startswith("kgent.")]


def _violations(package: Path = PACKAGE) -> list[str]:
    """Every import against the layers in the package at `package` (the installed one, or a copy)."""
    bad: list[str] = []
    for module in sorted(package.rglob("*.py")):
        if module.parent == package and module.name == "__init__.py":
            continue  # the root re-exports the public API lazily
        src = _part(module, package)
        for line, name in _imports(module, package):
            parts = name.split(".")
            if len(parts) < 2:
                bad.append(
                    f"{module.relative_to(package)}:{line} imports the kgent root (import the layer instead)"
                )
                continue
            dst = parts[1]
            if dst == src:
                continue
            if src not in LAYERS or dst not in LAYERS:
                bad.append(f"{module.relative_to(package)}:{line}: {src} or {dst} has no layer in LAYERS")
            elif LAYERS[dst] >= LAYERS[src]:
                bad.append(
                    f"{module.relative_to(package)}:{line}: {src} (layer {LAYERS[src]}) imports {name} (layer {LAYERS[dst]})"
                )
    return bad


def test_every_import_points_down_the_layers() -> None:
    assert _violations() == []


FRONTS = ("daemon", "http", "acp", "cli")
# `kgent demo`'s scenarios embed the kernel as a library does (docs/demos.md): the one named place outside the
# service that builds a kernel. Every other front starts its runs with RunService.start_run.
KERNEL_EMBEDDERS = ("cli/demo.py", "cli/demo_extension.py", "cli/demo_instructions.py", "cli/demo_rewind.py")


def _front_kernel_imports(package: Path = PACKAGE) -> list[str]:
    """Every import of kgent.kernel by a front (they reach the kernel only through the shared service)."""
    bad: list[str] = []
    for front in FRONTS:
        for module in sorted((package / front).rglob("*.py")):
            rel = module.relative_to(package).as_posix()
            if rel in KERNEL_EMBEDDERS:
                continue
            for line, name in _imports(module, package):
                if name == "kgent.kernel" or name.startswith("kgent.kernel."):
                    bad.append(f"{rel}:{line} imports {name} (a front goes through kgent.service)")
    return bad


def test_fronts_import_nothing_from_the_kernel(tmp_path: Path) -> None:
    assert _front_kernel_imports() == []
    assert all((PACKAGE / name).is_file() for name in KERNEL_EMBEDDERS)  # the exceptions name real files
    copy = tmp_path / "kgent"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.json", "static"))
    (copy / "acp" / "_probe.py").write_text("def f():\n    from kgent.kernel.cost import session_usage\n")
    assert _front_kernel_imports(copy) == [
        "acp/_probe.py:2 imports kgent.kernel.cost (a front goes through kgent.service)"
    ]


def test_every_package_has_a_layer() -> None:
    parts = {_part(m) for m in PACKAGE.rglob("*.py") if not (m.parent == PACKAGE and m.name == "__init__.py")}
    assert parts <= set(LAYERS), parts - set(LAYERS)


def test_the_checker_sees_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    """On a copy of the package with a probe added (the installed package is never written to)."""
    copy = tmp_path / "kgent"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.json", "static"))
    (copy / "tools" / "_layer_probe.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kgent.kernel import AgentKernel\n\n"
        "def f():\n    from kgent.context import project\n    from ..kernel import loop\n"
    )
    assert _violations(PACKAGE) == []
    found = _violations(copy)
    assert any("_layer_probe.py:7" in v and "kgent.kernel" in v for v in found), found
    assert any("_layer_probe.py:3" in v and "kgent.kernel" in v for v in found), found
    assert any("_layer_probe.py:6" in v and "kgent.context" in v for v in found), found
