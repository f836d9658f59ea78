"""One ``zm serve`` with two users and a little of everything, for the bad-input tables.

alice owns a fact, an open task, a pending pair row, a resolved pair row, a
challenged (single-subject) row, and portability proposals (pending, dismissed,
and one whose memory was forgotten); bob owns a fact, a challenged row and a
proposal. The tables refer to these by name (``Seed``), and to ids that exist
nowhere.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from mcp.client.client import Client

from tests.mcp.conftest import ClientPool
from tests.mcp.helpers import Deployment, base_env, call_ok, start_server, stop_server, zm
from zero_memory.domain.records import PortabilityCandidate
from zero_memory.ids import new_id
from zero_memory.store import open_store

MISSING_MEMORY = "mem_01zzzzzzzzzzzzzzzzzzzzzzzz"
MISSING_DISPUTE = "dsp_01zzzzzzzzzzzzzzzzzzzzzzzz"
MISSING_CANDIDATE = "prt_01zzzzzzzzzzzzzzzzzzzzzzzz"
# Two pairs the bundled model finds similar, so an offer-mode scan parks each as an unjudged row.
PAIRS = [
    ("The staging database is green", "The staging database is blue"),
    ("The api listens on port 8080", "The api listens on port 9090"),
]


@dataclass(frozen=True)
class Seed:
    fact: str
    task: str
    pending: str
    pending_a: str
    pending_b: str
    resolved: str
    single: str
    candidate: str
    dismissed: str
    candidate_forgotten: str
    bob_fact: str
    bob_single: str
    bob_candidate: str
    missing_memory: str = MISSING_MEMORY
    missing_dispute: str = MISSING_DISPUTE
    missing_candidate: str = MISSING_CANDIDATE


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = tmp_path_factory.mktemp("zm-badinput")
    env = base_env(home)
    tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
    deployment = Deployment(home=home, env=env, tokens=tokens)
    log = home / "serve.log"
    process, url = start_server(env, log)
    deployment.url, deployment.log = url, log
    yield deployment
    stop_server(process)


@pytest.fixture(scope="session")
async def clients(served: Deployment) -> AsyncIterator[ClientPool]:
    async with anyio.create_task_group() as tasks:
        pool = ClientPool(served, tasks)
        yield pool
        pool.closing.set()


async def _write(client: Client, content: str, kind: str = "fact", **extra: Any) -> str:
    result = await call_ok(
        client,
        "remember",
        {"content": content, "kind": kind, "scope": "personal", "session_id": new_id("seed"), **extra},
    )
    assert result["status"] == "created", result
    return str(result["id"])


def _propose(served: Deployment, memory_id: str, owner: str, status: str = "pending") -> str:
    candidate = PortabilityCandidate(
        id=new_id("prt"),
        memory_id=memory_id,
        owner=owner,
        status=status,
        original_scope=f"user.{owner}",
        created_at=datetime.now(UTC),
        confidence=0.9,
        rationale="seeded",
        model="seed",
    )
    store = open_store(f"sqlite:///{served.database}")
    try:
        with store.tx(write=True) as tx:
            tx.add_portability(candidate)
    finally:
        store.close()
    return candidate.id


@pytest.fixture(scope="session")
async def seed(served: Deployment, clients: ClientPool) -> Seed:
    alice = await clients.get("alice", "http", "auto")
    bob = await clients.get("bob", "http", "auto")
    fact = await _write(alice, "The release checklist lives in docs/release.md")
    task = await _write(alice, "Rotate the staging TLS certificate", "task")
    pairs = [(await _write(alice, a), await _write(alice, b)) for a, b in PAIRS]
    scan = await call_ok(alice, "scan_hygiene", {"wait": True})
    assert scan["queued"] >= 2, scan
    rows = {
        frozenset((c["memory_a"]["id"], c["memory_b"]["id"])): c["id"]
        for c in (await call_ok(alice, "list_conflicts", {"shape": "pair", "limit": 100}))["conflicts"]
    }
    pending, resolved = rows[frozenset(pairs[0])], rows[frozenset(pairs[1])]
    await call_ok(alice, "resolve_conflict", {"dispute_id": resolved, "keep_both": True})
    single = (await call_ok(alice, "challenge", {"memory_id": fact, "reason": "The file moved"}))["dispute_id"]
    forgotten = await _write(alice, "The old wiki is at wiki.example.com")
    await call_ok(alice, "forget", {"id": forgotten})
    bob_fact = await _write(bob, "Bob's build runs on the blue runner")
    bob_single = (await call_ok(bob, "challenge", {"memory_id": bob_fact, "reason": "It moved"}))["dispute_id"]
    return Seed(
        fact=fact,
        task=task,
        pending=pending,
        pending_a=pairs[0][0],
        pending_b=pairs[0][1],
        resolved=resolved,
        single=single,
        candidate=_propose(served, fact, "alice"),
        dismissed=_propose(served, task, "alice", "dismissed"),
        candidate_forgotten=_propose(served, forgotten, "alice"),
        bob_fact=bob_fact,
        bob_single=bob_single,
        bob_candidate=_propose(served, bob_fact, "bob"),
    )
