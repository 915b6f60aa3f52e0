"""`python -m kgent.service.wire [--check] [--root DIR]`: write what is generated from its one definition — the
protocol's JSON Schema (protocol.schema.json) and the VS Code shim's types (editors/vscode/src/wire.generated.ts)
from the wire models, and the boot path's tables (server/kgent/service/tables.json) from the kernel's registries.
Run it from the repository root; `--check` writes nothing and exits 1 if a file is stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgent.service.wire import schema, tables, typescript

SCHEMA_FILE = "protocol.schema.json"
TS_FILE = "editors/vscode/src/wire.generated.ts"
TABLES_FILE = tables.FILE


def generated() -> dict[str, str]:
    """{path relative to the repository root: its text}."""
    document = schema.build()
    return {
        SCHEMA_FILE: schema.render(document),
        TS_FILE: typescript.generate(document, schema.COMMAND),
        TABLES_FILE: tables.render(tables.build(schema.COMMAND)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=schema.COMMAND, description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a generated file is stale; write nothing"
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: .)")
    args = parser.parse_args(argv)
    stale = []
    for rel, text in generated().items():
        path = args.root / rel
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(rel)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    if args.check and stale:
        print(f"stale: {', '.join(stale)}; run `{schema.COMMAND}` from the repository root", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
