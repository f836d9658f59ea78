"""The review queue: one row per pair, filters, scope visibility, settling once."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.store.factories import add_users, at, memory, put
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, pair_key
from zero_memory.store import Store
from zero_memory.store.ports.review import DisputeQuery


def dispute(
    id: str,
    a: str,
    b: str | None,
    *,
    owner: str = "alice",
    verdict: str = "contradiction",
    origin: str = "scan",
    minutes: float = 0,
    status: DisputeStatus = DisputeStatus.PENDING,
) -> Dispute:
    return Dispute(
        id=id,
        owner=owner,
        shape=DisputeShape.PAIR if b else DisputeShape.SINGLE,
        verdict=verdict,
        origin=origin,
        status=status,
        memory_a=a,
        memory_b=b,
        created_at=at(minutes),
        direction="a_wins" if b else None,
        confidence=0.87 if b else None,
        rationale="they disagree" if b else None,
        model="judge-1" if b else None,
        pair_key=pair_key(a, b) if b else None,
        reason=None if b else "flagged",
        run_id="run_1",
    )


@pytest.fixture
def ids(store: Store) -> dict[str, str]:
    """Memories in alice's project, her core, and bob's personal scope."""
    rows = {
        "a1": memory("a1"),
        "a2": memory("a2"),
        "a3": memory("a3"),
        "core": memory("core", scope="user.alice.core"),
        "bob": memory("bob", owner="bob", scope="user.bob"),
    }
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        for m in rows.values():
            put(tx, m)
    return {name: m.id for name, m in rows.items()}


def test_a_dispute_reads_back_as_written(store: Store, ids: dict[str, str]) -> None:
    d = dispute("dsp_1", ids["a1"], ids["a2"])
    with store.tx(write=True) as tx:
        assert tx.add_dispute(d)
    with store.tx() as tx:
        assert tx.get_dispute("dsp_1") == d
        assert tx.dispute_for_pair(pair_key(ids["a2"], ids["a1"])) == d
        assert tx.get_dispute("dsp_9") is None
        assert tx.dispute_for_pair("nope|nope") is None


def test_a_retro_row_s_proposal_reads_back_as_written(store: Store, ids: dict[str, str]) -> None:
    proposal = {"action": "invalidate", "winner": ids["a2"], "loser": ids["a1"], "reason": "duplicate", "rule": 6}
    proposed = replace(dispute("dsp_1", ids["a1"], ids["a2"], origin="retro"), proposal=proposal)
    with store.tx(write=True) as tx:
        assert tx.add_dispute(proposed)
        assert tx.add_dispute(dispute("dsp_2", ids["a1"], ids["a3"]))
    with store.tx() as tx:
        assert tx.get_dispute("dsp_1") == proposed
        assert tx.get_dispute("dsp_2").proposal is None  # type: ignore[union-attr]


def test_a_pair_is_queued_once(store: Store, ids: dict[str, str]) -> None:
    with store.tx(write=True) as tx:
        assert tx.add_dispute(dispute("dsp_1", ids["a1"], ids["a2"]))
        assert not tx.add_dispute(dispute("dsp_2", ids["a2"], ids["a1"], verdict="duplicate"))
        assert not tx.add_dispute(dispute("dsp_1", ids["a1"], ids["a3"]))
        assert tx.add_dispute(dispute("dsp_3", ids["a1"], None))
        assert tx.add_dispute(dispute("dsp_4", ids["a1"], None))
    with store.tx() as tx:
        assert tx.count_disputes(DisputeQuery()) == 3
        assert tx.get_dispute("dsp_2") is None


def test_a_dispute_settles_only_once(store: Store, ids: dict[str, str]) -> None:
    with store.tx(write=True) as tx:
        tx.add_dispute(dispute("dsp_1", ids["a1"], ids["a2"]))
        assert tx.settle_dispute("dsp_1", DisputeStatus.RESOLVED, {"action": "a_wins"}, "alice", at(5))
        assert not tx.settle_dispute("dsp_1", DisputeStatus.DISMISSED, {}, "bob", at(6))
        assert not tx.settle_dispute("dsp_9", DisputeStatus.DISMISSED, {}, "bob", at(6))
    with store.tx() as tx:
        settled = tx.get_dispute("dsp_1")
    assert settled is not None
    assert (settled.status, settled.resolution, settled.resolved_by, settled.resolved_at) == (
        DisputeStatus.RESOLVED,
        {"action": "a_wins"},
        "alice",
        at(5),
    )


def test_a_pending_row_is_escalated_in_place_once(store: Store, ids: dict[str, str]) -> None:
    with store.tx(write=True) as tx:
        challenged = dispute("dsp_1", ids["a1"], None, verdict="challenged", origin="challenge")
        tx.add_dispute(replace(challenged, run_id=None))
        tx.add_dispute(replace(challenged, id="dsp_2", memory_a=ids["a2"]))
        assert tx.escalate_dispute("dsp_1", "challenged", "stale_suspect", "run_7")
        assert not tx.escalate_dispute("dsp_1", "challenged", "stale_suspect", "run_8"), "it is no longer challenged"
        assert tx.settle_dispute("dsp_2", DisputeStatus.RESOLVED, {"uphold": True}, "alice", at(5))
        assert not tx.escalate_dispute("dsp_2", "challenged", "stale_suspect", "run_7"), "a settled row stays settled"
    with store.tx() as tx:
        escalated, settled = tx.get_dispute("dsp_1"), tx.get_dispute("dsp_2")
        assert tx.count_disputes(DisputeQuery(verdict="stale_suspect")) == 1
    assert escalated is not None and settled is not None
    assert (escalated.id, escalated.verdict, escalated.origin, escalated.run_id, escalated.status) == (
        "dsp_1",
        "stale_suspect",
        "challenge",
        "run_7",
        DisputeStatus.PENDING,
    )
    assert (settled.verdict, settled.status) == ("challenged", DisputeStatus.RESOLVED)


class TestListing:
    @pytest.fixture
    def queue(self, store: Store, ids: dict[str, str]) -> None:
        with store.tx(write=True) as tx:
            tx.add_dispute(dispute("dsp_1", ids["a1"], ids["a2"], minutes=1))
            tx.add_dispute(dispute("dsp_2", ids["a1"], ids["core"], verdict="duplicate", origin="write"))
            tx.add_dispute(dispute("dsp_3", ids["a3"], None, minutes=2))
            tx.add_dispute(dispute("dsp_4", ids["bob"], None, owner="bob"))
            tx.add_dispute(dispute("dsp_5", ids["a2"], ids["a3"], status=DisputeStatus.DISMISSED))

    def listed(self, store: Store, **fields: Any) -> list[str]:
        """Ids listed for a query; the count of the same query without paging agrees."""
        query = DisputeQuery(**fields)
        unpaged = replace(query, limit=1000, after=None)
        with store.tx() as tx:
            found = [d.id for d in tx.list_disputes(query)]
            assert tx.count_disputes(unpaged) == len(tx.list_disputes(unpaged))
        return found

    @pytest.mark.usefixtures("queue")
    def test_pending_rows_by_default_in_id_order(self, store: Store) -> None:
        assert self.listed(store) == ["dsp_1", "dsp_2", "dsp_3", "dsp_4"]
        assert self.listed(store, status=None) == ["dsp_1", "dsp_2", "dsp_3", "dsp_4", "dsp_5"]
        assert self.listed(store, status=DisputeStatus.DISMISSED) == ["dsp_5"]

    @pytest.mark.usefixtures("queue")
    def test_each_filter(self, store: Store) -> None:
        assert self.listed(store, owner="bob") == ["dsp_4"]
        assert self.listed(store, verdict="duplicate") == ["dsp_2"]
        assert self.listed(store, shape="single") == ["dsp_3", "dsp_4"]
        assert self.listed(store, origin="write") == ["dsp_2"]
        assert self.listed(store, limit=2) == ["dsp_1", "dsp_2"]
        assert self.listed(store, after="dsp_2") == ["dsp_3", "dsp_4"]

    @pytest.mark.usefixtures("queue")
    def test_a_row_is_visible_only_when_both_its_memories_are(self, store: Store) -> None:
        project = frozenset({"proj.alice.api"})
        assert self.listed(store, scopes=project) == ["dsp_1", "dsp_3"]
        assert self.listed(store, scopes=project | {"user.alice.core"}) == ["dsp_1", "dsp_2", "dsp_3"]
        assert self.listed(store, scopes=frozenset({"user.bob"})) == ["dsp_4"]
        assert self.listed(store, scopes=frozenset()) == []
        with store.tx() as tx:
            assert tx.count_disputes(DisputeQuery(scopes=project)) == 2

    @pytest.mark.usefixtures("queue")
    def test_open_disputes_of_some_memories(self, store: Store, ids: dict[str, str]) -> None:
        with store.tx() as tx:
            assert [d.id for d in tx.open_disputes_for([ids["a1"]])] == ["dsp_1", "dsp_2"]
            assert [d.id for d in tx.open_disputes_for([ids["a3"], ids["a2"]])] == ["dsp_1", "dsp_3"]
            assert [d.id for d in tx.open_disputes_for([ids["core"], ids["core"]])] == ["dsp_2"]
            assert tx.open_disputes_for([]) == []
            assert tx.open_disputes_for(["mem_nope"]) == []
