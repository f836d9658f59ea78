"""The capture stream's tables: staged chunks (one per owner and hash, claimed under a lease) and allowances."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.store.factories import add_users, at
from zero_memory.domain.records import CaptureChunk, ChunkStatus
from zero_memory.store import Store


def chunk(chunk_id: str = "chk_1", *, owner: str = "alice", digest: str = "a" * 64, minutes: float = 0) -> CaptureChunk:
    return CaptureChunk(
        id=chunk_id,
        owner=owner,
        chunk_hash=digest,
        conversation_id="conv-1",
        client="claude-code",
        scope=f"proj.{owner}.api",
        transcript="user: hello ✓",
        chars=13,
        status=ChunkStatus.PENDING,
        next_attempt_at=at(minutes),
        created_at=at(minutes),
        updated_at=at(minutes),
    )


def test_a_chunk_is_staged_once_per_owner_and_hash(store: Store) -> None:
    with store.tx(write=True) as tx:
        assert tx.add_chunk(chunk())
        assert not tx.add_chunk(chunk("chk_2"))
        assert tx.add_chunk(chunk("chk_3", owner="bob"))
    with store.tx() as tx:
        assert tx.get_chunk("chk_1") == chunk()
        assert tx.chunk_by_hash("alice", "a" * 64) == chunk()
        assert tx.chunk_by_hash("alice", "b" * 64) is None
        assert tx.get_chunk("chk_2") is None
        assert tx.count_waiting_chunks("alice") == 1


def test_a_due_chunk_is_claimed_by_one_taker_until_its_lease_runs_out(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_chunk(chunk(minutes=10))
    with store.tx(write=True) as tx:
        assert tx.due_chunks(at=at(5)) == []
        assert tx.claim_chunk("chk_1", at=at(5), lease_until=at(20)) is None, "not due yet"
        claimed = tx.claim_chunk("chk_1", at=at(10), lease_until=at(20))
        assert claimed is not None and claimed.status is ChunkStatus.EXTRACTING and claimed.lease_until == at(20)
        assert tx.claim_chunk("chk_1", at=at(15), lease_until=at(30)) is None, "another taker holds it"
        assert tx.due_chunks(at=at(15)) == []
        assert tx.due_chunks(at=at(21)) == ["chk_1"], "a lease that ran out is due again"
        again = tx.claim_chunk("chk_1", at=at(21), lease_until=at(40))
        assert again is not None and again.lease_until == at(40)
        assert tx.count_waiting_chunks("alice") == 1


def test_due_chunks_come_oldest_first_and_by_owner(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_chunk(chunk("chk_b", digest="b" * 64, minutes=2))
        tx.add_chunk(chunk("chk_a", digest="a" * 64, minutes=1))
        tx.add_chunk(chunk("chk_c", owner="bob", digest="c" * 64, minutes=3))
    with store.tx() as tx:
        assert tx.due_chunks(at=at(9)) == ["chk_a", "chk_b", "chk_c"]
        assert tx.due_chunks(at=at(9), owner="bob") == ["chk_c"]
        assert tx.due_chunks(at=at(9), limit=1) == ["chk_a"]


def test_updating_a_chunk_sets_what_is_named_and_refuses_other_columns(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_chunk(chunk())
        tx.update_chunk(
            "chk_1",
            at(3),
            status=ChunkStatus.DONE,
            transcript=None,
            statements=3,
            created=1,
            yielded=1,
            absorbed=1,
            input_tokens=900,
            output_tokens=80,
            finished_at=at(3),
        )
        with pytest.raises(ValueError, match="owner"):
            tx.update_chunk("chk_1", at(4), owner="bob")
    with store.tx() as tx:
        done = tx.get_chunk("chk_1")
        assert done == replace(
            chunk(),
            status=ChunkStatus.DONE,
            transcript=None,
            statements=3,
            created=1,
            yielded=1,
            absorbed=1,
            input_tokens=900,
            output_tokens=80,
            finished_at=at(3),
            updated_at=at(3),
        )
        assert tx.count_waiting_chunks("alice") == 0
        assert tx.due_chunks(at=at(9)) == []


def test_only_a_given_up_chunk_is_rearmed(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_chunk(chunk())
        assert not tx.rearm_chunk("chk_1", "user: again", "proj.alice.web", at(5))
        tx.update_chunk("chk_1", at(4), status=ChunkStatus.FAILED, transcript=None, attempts=5, last_error="timeout")
        assert tx.rearm_chunk("chk_1", "user: again", "proj.alice.web", at(5))
    with store.tx() as tx:
        back = tx.get_chunk("chk_1")
    assert back is not None
    assert (back.status, back.transcript, back.scope, back.attempts, back.last_error) == (
        ChunkStatus.PENDING,
        "user: again",
        "proj.alice.web",
        0,
        None,
    )


def test_chunks_are_listed_per_owner_newest_first(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_chunk(chunk("chk_1", digest="a" * 64, minutes=1))
        tx.add_chunk(chunk("chk_2", digest="b" * 64, minutes=2))
        tx.add_chunk(chunk("chk_3", owner="bob", digest="c" * 64, minutes=3))
        tx.update_chunk("chk_1", at(5), status=ChunkStatus.FAILED)
    with store.tx() as tx:
        assert [c.id for c in tx.list_chunks(owner="alice")] == ["chk_2", "chk_1"]
        assert [c.id for c in tx.list_chunks(owner="alice", since=at(2))] == ["chk_2"]
        assert [c.id for c in tx.list_chunks(owner="alice", status=ChunkStatus.FAILED)] == ["chk_1"]


def test_an_allowance_is_set_replaced_and_cleared(store: Store) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        assert tx.get_capture_budget("alice") is None
        tx.set_capture_budget("alice", 5_000, at(1))
        tx.set_capture_budget("alice", 10_000_000_000, at(2))
        assert tx.get_capture_budget("alice") == 10_000_000_000
        assert tx.clear_capture_budget("alice")
        assert not tx.clear_capture_budget("alice")
        assert tx.get_capture_budget("alice") is None


def test_ledger_tokens_sum_one_owner_and_purpose_since_a_moment(store: Store) -> None:
    with store.tx(write=True) as tx:
        for owner, purpose, minutes, tokens in [
            ("alice", "extract", 1, (100, 20)),
            ("alice", "extract", 5, (300, 40)),
            ("alice", "scan", 5, (1_000, 1)),
            ("bob", "extract", 5, (7, 7)),
        ]:
            tx.add_ledger(
                owner=owner,
                model="m",
                purpose=purpose,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                latency_ms=1,
                outcome="judged",
                run_id=None,
                at=at(minutes),
            )
    with store.tx() as tx:
        assert tx.ledger_tokens(owner="alice", purpose="extract", since=at(0)) == 460
        assert tx.ledger_tokens(owner="alice", purpose="extract", since=at(2)) == 340
        assert tx.ledger_tokens(owner="carol", purpose="extract", since=at(0)) == 0


def test_chunks_put_off_for_a_reason_are_found_by_owner_and_brought_forward(store: Store) -> None:
    waiting = "budget_exhausted: waiting for tomorrow"
    with store.tx(write=True) as tx:
        for chunk_id, owner, digest, error in (
            ("chk_1", "alice", "a" * 64, waiting),
            ("chk_2", "alice", "b" * 64, "timeout: the model did not answer"),
            ("chk_3", "bob", "c" * 64, waiting),
        ):
            tx.add_chunk(chunk(chunk_id, owner=owner, digest=digest))
            tx.update_chunk(chunk_id, at(0), next_attempt_at=at(600), last_error=error)
    with store.tx(write=True) as tx:
        assert tx.owners_put_off(at=at(1), reason="budget_exhausted:") == ["alice", "bob"]
        assert tx.owners_put_off(at=at(1), reason="budget_exhausted:", owner="bob") == ["bob"]
        assert tx.owners_put_off(at=at(601), reason="budget_exhausted:") == [], "due already: nothing to bring"
        assert tx.bring_forward("alice", at=at(1), reason="budget_exhausted:") == 1
        assert tx.due_chunks(at=at(1)) == ["chk_1"], "the retry of chk_2 keeps its time, bob's chunk waits"
        assert tx.owners_put_off(at=at(1), reason="budget_exhausted:") == ["bob"]
