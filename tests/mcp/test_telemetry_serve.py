"""``zm serve`` writes usage events and surfacings in batches: every one of them when it stops, and when it
is killed at most those of its last batch, never a memory it acknowledged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.mcp.helpers import Deployment, base_env, call_ok, connect, recorded, start_server, stop_server, unique, zm
from zero_memory.clock import utcnow
from zero_memory.store import SYSTEM, Store, open_store, system_tx

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CLIENT = "telemetry-client"


@pytest.fixture
def deployment(tmp_path: Path) -> Deployment:
    env = base_env(tmp_path)
    tokens = {"alice": json.loads(zm(env, "user", "add", "alice", "--json").stdout)["token"]}
    return Deployment(home=tmp_path, env=env, tokens=tokens)


@pytest.fixture
def store(deployment: Deployment) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{deployment.database}")
    yield opened
    opened.close()


async def remember_and_recall(deployment: Deployment, count: int) -> tuple[list[str], int]:
    """``count`` remembers and ``count`` recalls; the ids acknowledged and the hits served."""
    ids, hits = [], 0
    async with connect(deployment, "http", "legacy", client_name=CLIENT) as client:
        for n in range(count):
            text = unique(f"Service {n} listens on port {8000 + n}")
            written = await call_ok(client, "remember", {"content": text, "kind": "fact", "scope": "personal"})
            ids.append(written["id"])
            found = await call_ok(client, "recall", {"query": f"port of service {n}", "session_id": f"s{n}"})
            hits += len(found["hits"])
    return ids, hits


def usage_events(store: Store) -> list[str]:
    with system_tx(store, "test") as tx:
        return [e["tool"] for e in tx.usage_events() if e["client"] == CLIENT]


def surfacings(store: Store, ids: list[str]) -> int:
    with system_tx(store, "test") as tx:
        return sum(tx.surfacings_of(ids, since=utcnow() - timedelta(days=1)).values())


async def test_a_stopped_server_has_written_every_usage_event_and_surfacing(
    deployment: Deployment, store: Store
) -> None:
    process, deployment.url = start_server(deployment.env, deployment.home / "serve.log")
    try:
        ids, hits = await remember_and_recall(deployment, 5)
    finally:
        stop_server(process)
    assert sorted(usage_events(store)) == ["recall"] * 5 + ["remember"] * 5
    assert surfacings(store, ids) == hits > 0


async def test_a_killed_server_loses_at_most_its_last_batch_and_never_a_memory(
    deployment: Deployment, store: Store
) -> None:
    process, deployment.url = start_server(deployment.env, deployment.home / "serve.log")
    try:
        ids, hits = await remember_and_recall(deployment, 10)
    finally:
        process.kill()
        process.wait(timeout=15)
    with system_tx(store, "test") as tx:
        kept = tx.get_memories(ids, SYSTEM)
    assert sorted(kept) == sorted(ids)
    assert all(m.live for m in kept.values())
    assert len(usage_events(store)) <= 20
    assert surfacings(store, ids) <= hits
    # The next server starts on what the killed one left, recalls what it acknowledged, and counts again.
    process, deployment.url = start_server(deployment.env, deployment.home / "serve.log")
    try:
        async with connect(deployment, "http", "legacy", client_name=CLIENT) as client:
            before = len(usage_events(store))
            found = await call_ok(client, "recall", {"query": "port of service 9"})
            assert ids[9] in [h["id"] for h in found["hits"]]
        assert len(recorded(lambda: usage_events(store), lambda seen: len(seen) > before)) == before + 1
    finally:
        stop_server(process)
