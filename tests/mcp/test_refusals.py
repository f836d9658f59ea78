"""Every refusal of the tools spec, with its stable prefix, over every transport and handshake."""

from __future__ import annotations

import pytest
from mcp.client.client import Client

from tests.mcp.helpers import call_error, call_ok, unique

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MISSING_ID = "mem_01zzzzzzzzzzzzzzzzzzzzzzzz"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def note(**fields: object) -> dict[str, object]:
    """A valid remember call (personal scope, a session of its own), with ``fields`` changed."""
    return {"content": unique("A note"), "kind": "fact", "scope": "personal", "session_id": unique("s"), **fields}


async def test_a_write_with_no_target_needs_a_scope(client: Client) -> None:
    text = await call_error(
        client, "remember", {"content": unique("Where does this go"), "kind": "fact", "session_id": unique("fresh")}
    )
    assert text.startswith("validation_failed: scope_target_required:")


async def test_an_empty_project_hint_is_unresolvable(client: Client) -> None:
    text = await call_error(client, "remember", note(scope=None, project_hint="   "))
    assert text.startswith("validation_failed: project_hint_unresolvable:")


@pytest.mark.parametrize("field", ["content", "project_hint", "session_id"])
async def test_a_credential_is_refused_and_never_echoed(client: Client, field: str) -> None:
    value = f"the token is {GITHUB_TOKEN}" if field == "content" else GITHUB_TOKEN
    text = await call_error(client, "remember", note(**{field: value}))
    assert text.startswith(f"validation_failed: secret_content_rejected: {field} ")
    assert GITHUB_TOKEN not in text and GITHUB_TOKEN[8:] not in text


async def test_a_credential_in_a_link_target_or_a_reason_is_not_echoed(client: Client) -> None:
    text = await call_error(client, "remember", note(links=[{"type": "relates_to", "dst": GITHUB_TOKEN}]))
    assert text.startswith("validation_failed:") and GITHUB_TOKEN[8:] not in text
    written = await call_ok(client, "remember", note())
    text = await call_error(client, "forget", {"id": written["id"], "reason": f"leaked {GITHUB_TOKEN}"})
    assert text.startswith("validation_failed: secret_content_rejected: reason ") and GITHUB_TOKEN[8:] not in text
    text = await call_error(client, "get_memory", {"id": GITHUB_TOKEN})
    assert text.startswith("not_found:") and GITHUB_TOKEN[8:] not in text


async def test_an_unknown_kind_is_refused(client: Client) -> None:
    text = await call_error(client, "remember", note(kind="rumour"))
    assert text.startswith("validation_failed: kind:")


@pytest.mark.parametrize("content", ["", "   \n", "x" * 16_001], ids=["empty", "blank", "oversized"])
async def test_empty_or_oversized_content_is_refused(client: Client, content: str) -> None:
    text = await call_error(client, "remember", note(content=content))
    assert text.startswith("validation_failed: content:")


async def test_more_than_ten_declared_supersedes_are_refused(client: Client) -> None:
    links = [{"type": "supersedes", "dst": f"mem_{i:026d}"} for i in range(11)]
    text = await call_error(client, "remember", note(links=links))
    assert text.startswith("validation_failed: links:")


async def test_a_provisional_write_cannot_declare_a_supersede(client: Client) -> None:
    old = await call_ok(client, "remember", note())
    text = await call_error(
        client, "remember", note(provisional=True, links=[{"type": "supersedes", "dst": old["id"]}])
    )
    assert text.startswith("validation_failed: links:")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get_memory", {"id": MISSING_ID}),
        ("forget", {"id": MISSING_ID}),
        ("restore_memory", {"id": MISSING_ID}),
        ("close_loop", {"id": MISSING_ID}),
        ("link", {"src": MISSING_ID, "dst": MISSING_ID[:-1] + "y", "type": "relates_to"}),
    ],
)
async def test_a_missing_id_is_not_found(client: Client, tool: str, arguments: dict[str, object]) -> None:
    text = await call_error(client, tool, arguments)
    assert text == f"not_found: no memory {MISSING_ID}"


async def test_linking_to_a_missing_memory_is_not_found(client: Client) -> None:
    written = await call_ok(client, "remember", note())
    text = await call_error(client, "link", {"src": written["id"], "dst": MISSING_ID, "type": "relates_to"})
    assert text == f"not_found: no memory {MISSING_ID}"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("recall", {"query": "q", "bogus": 1}, "validation_failed: bogus: unknown argument"),
        (
            "remember",
            {"content": "x", "kind": "fact", "scope": "personal", "tags": ["a"]},
            "validation_failed: tags: unknown argument",
        ),
        ("get_memory", {"memory_id": MISSING_ID}, "validation_failed: id: required; memory_id: unknown argument"),
        ("recall", {"query": "q", "limit": "7"}, "validation_failed: limit: Input should be a valid integer"),
        ("recall", {"query": "q", "limit": 51}, "validation_failed: limit: Input should be less than or equal to 50"),
        ("recall", {"query": "q", "kinds": "fact"}, "validation_failed: kinds: Input should be a valid array"),
        ("recall", {"query": 42}, "validation_failed: query: Input should be a valid string"),
        (
            "remember",
            {"content": "x", "kind": "fact", "scope": "personal", "provisional": "true"},
            "validation_failed: provisional: Input should be a valid boolean",
        ),
        (
            "remember",
            {"content": "x", "kind": "fact", "scope": "personal", "links": [{"type": "supersedes"}]},
            "validation_failed: links[0].dst: required",
        ),
        (
            "remember",
            {"content": "x", "kind": "fact", "scope": "personal", "source": {"thread": "t", "url": "u"}},
            "validation_failed: source.url: unknown argument",
        ),
        (
            "link",
            {"src": "a", "dst": "b", "type": "supersedes"},
            "validation_failed: type: Input should be 'relates_to', 'derived_from' or 'contradicts'",
        ),
        (
            "move_memories",
            {"ids": "mem_x", "scope": "personal"},
            "validation_failed: ids: Input should be a valid array",
        ),
        ("remember", {"kind": "fact"}, "validation_failed: content: required"),
    ],
)
async def test_unknown_arguments_and_wrong_types_name_the_field(
    client: Client, tool: str, arguments: dict[str, object], expected: str
) -> None:
    assert await call_error(client, tool, arguments) == expected


async def test_move_needs_exactly_one_target(client: Client) -> None:
    written = await call_ok(client, "remember", note())
    neither = await call_error(client, "move_memories", {"ids": [written["id"]]})
    both = await call_error(
        client, "move_memories", {"ids": [written["id"]], "scope": "core", "project_hint": "/work/src/x"}
    )
    assert neither.startswith("validation_failed:") and both.startswith("validation_failed:")


async def test_an_unknown_tool_is_refused_with_a_code(client: Client) -> None:
    assert (
        await call_error(client, "delete_everything", {})
        == "validation_failed: name: there is no tool 'delete_everything'"
    )
