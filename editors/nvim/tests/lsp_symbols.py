"""A tiny real LSP server (pygls, over stdio) for the #symbol test: answers textDocument/documentSymbol for a plain
"plan" file, from the document's text as the editor sent it. A line `section NAME` starts a top-level symbol, an
indented `item NAME` a child of the section it is in; each runs to the line before the next one (or the end).
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("kgent-test-symbols", "1")


def _range(lines: list[str], first: int, last: int) -> types.Range:
    return types.Range(
        start=types.Position(line=first, character=0),
        end=types.Position(line=last, character=len(lines[last])),
    )


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbols(params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    lines = server.workspace.get_text_document(params.text_document.uri).lines
    lines = [line.rstrip("\n") for line in lines]
    heads = [
        (n, line.split()[0], line.split()[1])
        for n, line in enumerate(lines)
        if len(line.split()) == 2 and line.split()[0] in ("section", "item")
    ]
    sections: list[types.DocumentSymbol] = []
    items: list[types.DocumentSymbol] = []  # the children of the last section
    for k, (n, kind, name) in enumerate(heads):
        if kind == "section":
            nxt = next((m for m, kd, _ in heads[k + 1 :] if kd == "section"), len(lines))
        else:
            nxt = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        last = nxt - 1
        while last > n and not lines[last].strip():
            last -= 1
        children: list[types.DocumentSymbol] = []
        sym = types.DocumentSymbol(
            name=name,
            kind=types.SymbolKind.Namespace if kind == "section" else types.SymbolKind.Field,
            range=_range(lines, n, last),
            selection_range=_range(lines, n, n),
            children=children,
        )
        if kind == "section":
            sections.append(sym)
            items = children
        elif sections:
            items.append(sym)
    return sections


if __name__ == "__main__":
    server.start_io()
