"""Stale suspects through the MCP edge (docs/spec/hygiene.md §11): the official client against ``zm serve``,
each session its own connection (its own ``mcp-session-id``), the cycle run by ``scan_hygiene``, a person's
settlement by the ``zm`` binary.

Each test speaks as a user of its own, so the counts of one user's cycles are that test's alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client.client import Client

from tests.mcp.helpers import (
    Deployment,
    base_env,
    call_ok,
    connect,
    serving,
    unique,
    zm,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

USERS = ("ada", "ben", "cy", "dee")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """A deployment of its own (no judge: the cycle runs in offer mode), with ``zm serve`` running."""
    home = tmp_path_factory.mktemp("zm-suspects")
    with serving(home, base_env(home), USERS) as deployment:
        yield deployment


def session(deployment: Deployment, user: str) -> Any:
    """A new MCP session: a connection of its own over HTTP with the legacy handshake."""
    return connect(deployment, "http", "legacy", user=user)


async def fact(client: Client) -> str:
    content = unique("The staging database is green")
    written = await call_ok(client, "remember", {"content": content, "kind": "fact", "scope": "personal"})
    return str(written["id"])


async def challenge(client: Client, memory_id: str, reason: str) -> dict[str, Any]:
    return await call_ok(client, "challenge", {"memory_id": memory_id, "reason": reason})


async def scan(client: Client) -> int:
    """One full cycle; how many stale suspects it raised or escalated."""
    result = await call_ok(client, "scan_hygiene", {"wait": True})
    assert result["status"] == "completed", result
    return int(result["stale_suspects"])


async def doubts(client: Client, memory_id: str, status: str = "pending") -> list[tuple[str, str, str]]:
    """(id, verdict, origin) of the single-subject rows about the memory."""
    listed = await call_ok(client, "list_conflicts", {"shape": "single", "status": status, "limit": 100})
    return [(c["id"], c["verdict"], c["origin"]) for c in listed["conflicts"] if c["memory_a"]["id"] == memory_id]


async def test_two_misled_sessions_escalate_the_challenge_in_place(served: Deployment) -> None:
    async with session(served, "ada") as morning, session(served, "ada") as evening:
        memory_id = await fact(morning)
        first = await challenge(morning, memory_id, "It is blue now")
        again = await challenge(morning, memory_id, "Still blue")
        assert first["created"] and not again["created"] and again["dispute_id"] == first["dispute_id"]
        assert await scan(morning) == 0, "one session, however insistent, is one signal"

        joined = await challenge(evening, memory_id, "Blue since the redesign")
        assert joined == {"dispute_id": first["dispute_id"], "created": False}
        assert await scan(evening) == 1
        assert await doubts(evening, memory_id) == [(first["dispute_id"], "stale_suspect", "challenge")]
        assert await scan(evening) == 0, "raised once: one row, never two"
        trail = (await call_ok(evening, "get_memory", {"id": memory_id}))["audit"]
    reasons = sorted(a["payload"]["reason"] for a in trail if a["action"] == "challenge")
    assert reasons == ["Blue since the redesign", "It is blue now"]
    (escalated,) = [a for a in trail if a["action"] == "queue.escalate"]
    assert escalated["payload"]["verdict"] == "stale_suspect" and escalated["payload"]["signals"] == 2


async def test_a_persons_dismissal_holds_until_new_sessions_are_misled(served: Deployment) -> None:
    person = {**served.env, "ZM_USER": "ben"}
    async with session(served, "ben") as morning, session(served, "ben") as evening:
        memory_id = await fact(morning)
        dispute_id = (await challenge(morning, memory_id, "It is blue now"))["dispute_id"]
        await challenge(evening, memory_id, "Still blue")
        assert await scan(morning) == 1

    settled = json.loads(zm(person, "conflicts", "resolve", dispute_id, "--keep-both", "--json").stdout)
    assert settled["resolution"] == {"uphold": True}
    async with session(served, "ben") as client:
        assert await scan(client) == 0
        assert await doubts(client, memory_id) == []
        reopened = await challenge(client, memory_id, "Blue, I checked")
        assert reopened["created"]
        assert await scan(client) == 0, "one new session is not enough"
    async with session(served, "ben") as later:
        await challenge(later, memory_id, "Blue in production")
        assert await scan(later) == 1
        assert await doubts(later, memory_id) == [(reopened["dispute_id"], "stale_suspect", "challenge")]


async def test_an_agent_settling_its_own_challenge_spends_nothing(served: Deployment) -> None:
    async with session(served, "cy") as morning, session(served, "cy") as evening:
        memory_id = await fact(morning)
        first = await challenge(morning, memory_id, "It is blue now")
        await challenge(evening, memory_id, "Still blue")
        closed = await call_ok(morning, "resolve_conflict", {"dispute_id": first["dispute_id"], "keep_both": True})
        assert closed["status"] == "resolved"
        assert await doubts(morning, memory_id) == []

        assert await scan(morning) == 1, "two sessions were misled; an agent closing the row does not clear it"
        ((suspect_id, verdict, origin),) = await doubts(morning, memory_id)
        assert (verdict, origin) == ("stale_suspect", "stale_suspect") and suspect_id != first["dispute_id"]
        await call_ok(evening, "resolve_conflict", {"dispute_id": suspect_id, "keep_both": True})
        assert await scan(evening) == 1, "it comes back until a person has looked"


async def test_without_a_transport_session_the_clients_session_ids_tell_sessions_apart(served: Deployment) -> None:
    """The 2026 protocol (``auto`` over HTTP) has no transport session: challenges that name none are one."""
    async with connect(served, "http", "auto", user="dee") as client:
        memory_id = await fact(client)
        first = await challenge(client, memory_id, "It is blue now")
        await challenge(client, memory_id, "Still blue")
        assert await scan(client) == 0
        arguments = {"memory_id": memory_id, "reason": "Blue in production", "session_id": "conv-42"}
        joined = await call_ok(client, "challenge", arguments)
        assert joined == {"dispute_id": first["dispute_id"], "created": False}
        assert await scan(client) == 1
        assert await doubts(client, memory_id) == [(first["dispute_id"], "stale_suspect", "challenge")]
