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


def test_rows_are_numbered_in_order_and_found_by_memory_newest_first(store: Store) -> None:
    with store.tx(write=True) as tx:
        first = audit(tx, "remember", ["mem_a"], minutes=0, kind="fact")
        second = audit(tx, "supersede", ["mem_b", "mem_a", "mem_b"], minutes=1, reason="newer")
        audit(tx, "forget", ["mem_c"], minutes=2)
    assert second > first
    with store.tx() as tx:
        rows = tx.audit_for_memory("mem_a")
        assert [r.seq for r in rows] == [second, first]
        assert rows[0].memory_ids == ["mem_b", "mem_a", "mem_b"]
        assert rows[0].payload == {"reason": "newer"}
        assert (rows[0].actor, rows[0].action, rows[0].owner, rows[0].at) == ("alice", "supersede", "alice", at(1))
        assert [r.seq for r in tx.audit_for_memory("mem_b")] == [second]
        assert [r.seq for r in tx.audit_for_memory("mem_a", limit=1)] == [second]
        assert tx.audit_for_memory("mem_z") == []


def test_a_long_trail_is_read_newest_first_page_by_page_and_by_action(store: Store) -> None:
    with store.tx(write=True) as tx:
        seqs = [audit(tx, "pin" if n % 2 else "unpin", ["mem_a"], minutes=n) for n in range(250)]
        audit(tx, "forget", ["mem_b"], minutes=300)
    with store.tx() as tx:
        newest = tx.audit_for_memory("mem_a")
        assert [r.seq for r in newest] == seqs[::-1][:200]  # the recent trail, not the first 200 rows
        pages, before = [], None
        while page := tx.audit_for_memory("mem_a", limit=60, before=before):
            pages += [r.seq for r in page]
            before = page[-1].seq
        assert pages == seqs[::-1]
        pins = tx.audit_for_memory("mem_a", actions=["pin"], limit=3)
        assert [r.seq for r in pins] == [seqs[249], seqs[247], seqs[245]]
        assert [r.seq for r in tx.audit_for_memory("mem_a", actions=["pin"], before=seqs[2])] == [seqs[1]]
        assert tx.audit_for_memory("mem_a", actions=["forget"]) == []
        assert tx.audit_for_memory("mem_a", actions=[]) == []


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


def test_the_latest_time_of_an_action_is_found_per_memory(store: Store) -> None:
    with store.tx(write=True) as tx:
        audit(tx, "reaffirm", ["mem_a"], minutes=0)
        audit(tx, "reaffirm", ["mem_a", "mem_b"], minutes=3)
        audit(tx, "reaffirm", ["mem_a"], minutes=2)
        audit(tx, "forget", ["mem_c"], minutes=4)
    with store.tx() as tx:
        assert tx.last_action_at(["mem_a", "mem_b", "mem_c", "mem_z"], "reaffirm") == {"mem_a": at(3), "mem_b": at(3)}
        assert tx.last_action_at([], "reaffirm") == {}
