"""The definitions in one source file, by qualified name: functions, classes, methods and top-level constants.

Python is read with its own ``ast``; TypeScript, JavaScript, Go, Rust and Java with tree-sitter and each
grammar's own definitions query (the ``tags.scm`` its package ships, the one editors use for "go to
definition"), plus a small query of our own for top-level constants, which those queries leave out. A
method is named through its class (``Client.flush``); a name defined twice keeps its first definition.
A file in another language, or one that does not parse, has no symbols: anchors into it hold the whole file.
"""

from __future__ import annotations

import ast
import functools
import importlib
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath
from typing import Any


@dataclass(frozen=True, slots=True)
class Region:
    name: str  # qualified: "retry", "Client.flush", "LIMIT"
    kind: str  # function, class, method, constant
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str


@dataclass(frozen=True, slots=True)
class _Grammar:
    package: str
    function: str  # the package's function returning the language pointer
    tags: tuple[str, ...]  # packages whose queries/tags.scm apply, in order (TypeScript builds on JavaScript)
    constants: str  # our query for top-level constants: @name inside @definition.constant


_JS_CONSTANTS = """
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name)
  @definition.constant)))
"""

GRAMMARS: dict[str, _Grammar] = {
    ".py": _Grammar("", "", (), ""),  # ast
    ".ts": _Grammar(
        "tree_sitter_typescript",
        "language_typescript",
        ("tree_sitter_javascript", "tree_sitter_typescript"),
        _JS_CONSTANTS,
    ),
    ".tsx": _Grammar(
        "tree_sitter_typescript", "language_tsx", ("tree_sitter_javascript", "tree_sitter_typescript"), _JS_CONSTANTS
    ),
    ".js": _Grammar("tree_sitter_javascript", "language", ("tree_sitter_javascript",), _JS_CONSTANTS),
    ".mjs": _Grammar("tree_sitter_javascript", "language", ("tree_sitter_javascript",), _JS_CONSTANTS),
    ".cjs": _Grammar("tree_sitter_javascript", "language", ("tree_sitter_javascript",), _JS_CONSTANTS),
    ".jsx": _Grammar("tree_sitter_javascript", "language", ("tree_sitter_javascript",), _JS_CONSTANTS),
    ".go": _Grammar(
        "tree_sitter_go",
        "language",
        ("tree_sitter_go",),
        "(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))",
    ),
    ".rs": _Grammar(
        "tree_sitter_rust",
        "language",
        ("tree_sitter_rust",),
        "(source_file (const_item name: (identifier) @name) @definition.constant)"
        "(source_file (static_item name: (identifier) @name) @definition.constant)",
    ),
    ".java": _Grammar("tree_sitter_java", "language", ("tree_sitter_java",), ""),
}

CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "module", "type"})


def supported(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in GRAMMARS


def regions(path: str, source: str) -> dict[str, Region]:
    """Every definition of the file by qualified name (empty for an unknown language or a file that fails to
    parse)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix == ".py":
        return _python(source)
    grammar = GRAMMARS.get(suffix)
    if grammar is None:
        return {}
    return _tree_sitter(grammar, source)


def find(path: str, source: str, symbol: str) -> Region | None:
    """The region of ``symbol`` in the file, by its qualified name, or by its bare name when exactly one
    definition has it (``flush`` finds ``Client.flush`` when no other ``flush`` is defined)."""
    return pick(regions(path, source), symbol)


def pick(found: dict[str, Region], symbol: str) -> Region | None:
    """``symbol`` among a file's definitions: by qualified name, else by a bare name only one has."""
    if symbol in found:
        return found[symbol]
    tail = [region for name, region in found.items() if name.rsplit(".", 1)[-1] == symbol]
    return tail[0] if len(tail) == 1 else None


# Python


def _python(source: str) -> dict[str, Region]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    lines = source.splitlines()
    found: dict[str, Region] = {}

    def add(name: str, kind: str, node: ast.stmt) -> None:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        last = node.end_lineno or node.lineno
        found.setdefault(name, Region(name, kind, first, last, "\n".join(lines[first - 1 : last])))

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                add(prefix + node.name, "method" if in_class else "function", node)
            elif isinstance(node, ast.ClassDef):
                add(prefix + node.name, "class", node)
                visit(node.body, f"{prefix}{node.name}.", True)
            elif not prefix and isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        add(target.id, "constant", node)

    visit(tree.body, "", False)
    return found


# tree-sitter


@functools.cache
def _parser_and_query(suffix: str) -> tuple[Any, Any] | None:
    grammar = GRAMMARS[suffix]
    try:
        import tree_sitter

        module = importlib.import_module(grammar.package)
        language = tree_sitter.Language(getattr(module, grammar.function)())
        text = "\n".join(
            resources.files(package).joinpath("queries", "tags.scm").read_text() for package in grammar.tags
        )
        query = tree_sitter.Query(language, text + "\n" + grammar.constants)
        return tree_sitter.Parser(language), query
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _tree_sitter(grammar: _Grammar, source: str) -> dict[str, Region]:
    suffix = next(s for s, g in GRAMMARS.items() if g is grammar)
    loaded = _parser_and_query(suffix)
    if loaded is None:
        return {}
    parser, query = loaded
    import tree_sitter

    data = source.encode()
    tree = parser.parse(data)
    definitions: list[tuple[Any, str, str]] = []  # (node, kind, bare name)
    for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        names = captures.get("name") or []
        for capture, nodes in captures.items():
            if not capture.startswith("definition.") or not names:
                continue
            for node in nodes:
                definitions.append((node, capture.removeprefix("definition."), _text(data, names[0])))
    containers = [(node, name) for node, kind, name in definitions if kind in CLASS_KINDS]
    lines = source.splitlines()
    found: dict[str, Region] = {}
    # A constant's own query also matches a declaration the grammar's query names a function: that one wins.
    for node, kind, name in sorted(definitions, key=lambda d: (d[1] == "constant", d[0].start_byte, -d[0].end_byte)):
        outer = [
            container_name
            for container, container_name in containers
            if container.start_byte <= node.start_byte
            and node.end_byte <= container.end_byte
            and (container.start_byte, container.end_byte) != (node.start_byte, node.end_byte)
        ]
        qualified = ".".join([*outer, name])
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        kind = "method" if outer and kind == "function" else kind
        found.setdefault(qualified, Region(qualified, kind, first, last, "\n".join(lines[first - 1 : last])))
    return found


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode(errors="replace")
