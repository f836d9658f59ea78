"""The audit log: append-only rows, found by memory, run and action; payloads capped."""

from __future__ import annotations

import json
from typing import Any

from tests.store.factories import at
from zero_memory.store import Store, Tx


def audit(tx: Tx, action: str, ids: list[str], *, minutes: float = 0, run: str | None = None, **payload: Any) -> int:
    return tx.add_audit(
        actor="alice", action=action, owner="alice", memory_ids=ids, payload=payload, run_id=run, at=at(minutes)
    )


def test_rows_are_numbered_in_order_and_found_by_memory(store: Store) -> None:
    with store.tx(write=True) as tx:
        first = audit(tx, "remember", ["mem_a"], minutes=0, kind="fact")
        second = audit(tx, "supersede", ["mem_b", "mem_a", "mem_b"], minutes=1, reason="newer")
        audit(tx, "forget", ["mem_c"], minutes=2)
    assert second > first
    with store.tx() as tx:
        rows = tx.audit_for_memory("mem_a")
        assert [r.seq for r in rows] == [first, second]
        assert rows[1].memory_ids == ["mem_b", "mem_a", "mem_b"]
        assert rows[1].payload == {"reason": "newer"}
        assert (rows[1].actor, rows[1].action, rows[1].owner, rows[1].at) == ("alice", "supersede", "alice", at(1))
        assert [r.seq for r in tx.audit_for_memory("mem_b")] == [second]
        assert [r.seq for r in tx.audit_for_memory("mem_a", limit=1)] == [first]
        assert tx.audit_for_memory("mem_z") == []


def test_rows_are_found_by_run_and_by_action_since(store: Store) -> None:
    with store.tx(write=True) as tx:
        audit(tx, "hygiene.supersede", ["mem_a"], minutes=0, run="run_1")
        audit(tx, "hygiene.supersede", ["mem_b"], minutes=5, run="run_2")
        audit(tx, "hygiene.queue", ["mem_c"], minutes=6, run="run_2")
    with store.tx() as tx:
        assert [r.memory_ids for r in tx.audit_for_run("run_2")] == [["mem_b"], ["mem_c"]]
        assert tx.audit_for_run("run_9") == []
        assert [r.memory_ids for r in tx.audit_actions("hygiene.supersede")] == [["mem_a"], ["mem_b"]]
        assert [r.memory_ids for r in tx.audit_actions("hygiene.supersede", since=at(1))] == [["mem_b"]]


def test_payload_strings_are_capped_at_500_characters(store: Store) -> None:
    with store.tx(write=True) as tx:
        audit(tx, "remember", ["mem_a"], content="x" * 2000, nested={"why": ["y" * 900]}, small="ok", n=3)
    with store.tx() as tx:
        (row,) = tx.audit_for_memory("mem_a")
    assert len(row.payload["content"]) == 500
    assert row.payload["content"].endswith("…")
    assert len(row.payload["nested"]["why"][0]) == 500
    assert (row.payload["small"], row.payload["n"]) == ("ok", 3)


def test_a_payload_over_8_kb_keeps_its_scalars_and_says_so(store: Store) -> None:
    with store.tx(write=True) as tx:
        audit(tx, "hygiene.scan", ["mem_a"], verdict="duplicate", pairs=["p" * 400] * 40, confidence=0.9)
    with store.tx() as tx:
        (row,) = tx.audit_for_memory("mem_a")
    assert row.payload == {"verdict": "duplicate", "confidence": 0.9, "truncated": True}
    assert len(json.dumps(row.payload)) < 8192
