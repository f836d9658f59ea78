"""docs/spec is the contract users read as the interface: every CLI command, MCP tool (each of its parameters
and answer fields), prompt, resource and ``ZM_`` variable the code has must be named there, and nothing may be
named there that the code lacks; every error code and second prefix is in tools.md.

The code side comes from the code: the Typer command tree, what the MCP server lists, and the ``ZM_`` names
the package's source spells as whole strings. The docs side follows the spec's own conventions:
- a tool is defined as **`name`** `(param, param?, …)`, its answer's fields named in its paragraph;
- a command is a backticked span in the first column of operations.md's CLI table; a span that does not
  start with `zm`, after `zm a b` in the same cell, is a sibling (`list` is `zm a list`);
- a variable is named in the first column of operations.md's configuration table.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from typing import Any

import typer

from zero_memory import errors
from zero_memory.bootstrap import build_app
from zero_memory.cli.main import cli
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.mcp.server import build_server
from zero_memory.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec"
VARIABLE = re.compile(r"ZM_[A-Z0-9_]+")


def section(text: str, heading: str) -> str:
    """The lines under ``## heading`` up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/spec has no section {heading!r}"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    rows = [line.strip().strip("|").split(" | ") for line in text.splitlines() if line.startswith("|")]
    return rows[2:]  # below the header and its rule


# --- the CLI ---------------------------------------------------------------------------------------------


def leaf_commands(command: Any, path: tuple[str, ...] = ()) -> set[str]:
    children = getattr(command, "commands", None)
    if not children:
        return {" ".join(("zm", *path))}
    return set().union(*(leaf_commands(child, (*path, name)) for name, child in children.items()))


def all_commands(command: Any, path: tuple[str, ...] = ()) -> set[str]:
    found = {" ".join(("zm", *path))}
    for name, child in getattr(command, "commands", {}).items():
        found |= all_commands(child, (*path, name))
    return found


def documented_commands(known: set[str]) -> tuple[set[str], list[str]]:
    """The commands operations.md's CLI table names, and the spans that name no command of the code."""
    documented: set[str] = set()
    unknown: list[str] = []
    for row in table_rows(section((SPEC / "operations.md").read_text(), "CLI: `zm`")):
        parent = None
        for span in re.findall(r"`([^`]+)`", row[0]):
            words = span.split()
            if words[0] != "zm" and parent is not None:
                words = [*parent.split(), words[0]]
            prefixes = [" ".join(words[:n]) for n in range(len(words), 0, -1)]
            longest = next((prefix for prefix in prefixes if prefix in known), None)
            if longest is None or longest == "zm":
                unknown.append(span)
                continue
            documented.add(longest)
            parent = longest.rsplit(" ", 1)[0]
    return documented, unknown


def test_every_cli_command_is_in_the_spec_and_every_documented_one_exists() -> None:
    tree = typer.main.get_command(cli)
    documented, unknown = documented_commands(all_commands(tree))
    assert sorted(leaf_commands(tree) - documented) == []
    assert unknown == []


# --- the MCP surface ---------------------------------------------------------------------------------------


def mcp_surface(tmp_path: Path) -> tuple[list[Any], list[Any], list[Any]]:
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/zm.db")
    app = build_app(settings, embedder=HashingEmbedder())
    try:
        server = build_server(app)

        async def listed() -> tuple[list[Any], list[Any], list[Any]]:
            return await server.list_tools(), await server.list_prompts(), await server.list_resource_templates()

        return asyncio.run(listed())
    finally:
        app.close()


def tool_entries(text: str) -> dict[str, tuple[set[str], str]]:
    """Each tool the spec defines: the names in its signature, and the text that describes it (its paragraph
    with its bullets, shared by the tools one paragraph defines together, and the file's preamble, which names
    what every tool shares)."""
    preamble = text[: text.index("\n## ")]
    entries = {}
    for block in re.split(r"\n\n(?=\*\*`)", text):
        for match in re.finditer(r"\*\*`([a-z_]+)`\*\*\s*`\(([^`]*)\)`", block):
            entries[match.group(1)] = (set(re.findall(r"[a-z_]+", match.group(2))), preamble + block)
    return entries


def answer_fields(schema: dict[str, Any]) -> set[str]:
    """The field names of an answer, nested objects' included (``$defs``: a hit's, a row's, an anchor's)."""
    fields = set(schema.get("properties", {}))
    for definition in schema.get("$defs", {}).values():
        fields |= set(definition.get("properties", {}))
    return fields


def test_every_mcp_tool_parameter_and_answer_field_is_in_the_spec(tmp_path: Path) -> None:
    tools, prompts, templates = mcp_surface(tmp_path)
    text = (SPEC / "tools.md").read_text()
    entries = tool_entries(text)
    gaps = []
    for tool in tools:
        if tool.name not in entries:
            gaps.append(f"{tool.name}: not defined")
            continue
        signature, paragraph = entries[tool.name]
        gaps += [f"{tool.name}: parameter {p}" for p in tool.input_schema["properties"] if p not in signature]
        answer = answer_fields(tool.output_schema or {})
        gaps += [f"{tool.name}: answer field {f}" for f in sorted(answer) if not re.search(rf"\b{f}\b", paragraph)]
    assert gaps == []
    assert sorted(set(entries) - {tool.name for tool in tools}) == []
    for prompt in prompts:
        defined = re.search(rf"Prompt `{prompt.name}`(?: `\(([^`]*)\)`)?", text)
        assert defined, f"prompt {prompt.name} is not in the spec"
        signature = set(re.findall(r"[a-z_]+", defined.group(1) or ""))
        assert {argument.name for argument in prompt.arguments or []} <= signature
    for template in templates:
        assert f"Resource `{template.uri_template}`" in text


def test_every_error_code_and_second_prefix_is_in_the_spec() -> None:
    text = (SPEC / "tools.md").read_text()
    subcodes = [value for name, value in vars(errors).items() if name.isupper() and isinstance(value, str)]
    assert "already_resolved" in subcodes  # the scan sees the second prefixes
    assert [code for code in [*errors.Code, *subcodes] if not re.search(rf"\b{code}:", text)] == []


# --- configuration -----------------------------------------------------------------------------------------


def variables_in_code() -> set[str]:
    """Every ``ZM_`` name the package spells as a whole string: what it reads from the environment."""
    found = set()
    for path in (ROOT / "src" / "zero_memory").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.fullmatch(node.value):
                found.add(node.value)
    return found


def test_every_zm_variable_is_in_the_configuration_table_and_every_documented_one_is_read() -> None:
    rows = table_rows(section((SPEC / "operations.md").read_text(), "Configuration"))
    documented = {name for row in rows for name in VARIABLE.findall(row[0])}
    in_code = variables_in_code()
    assert "ZM_DATABASE_URL" in in_code  # the scan sees the settings
    assert sorted(in_code - documented) == []
    assert sorted(documented - in_code) == []
