"""Links between memories: either direction, soft removal."""

from __future__ import annotations

from tests.store.factories import at
from zero_memory.domain.memory import LinkType
from zero_memory.domain.records import Link
from zero_memory.store import Store


def link(src: str, dst: str, kind: LinkType = LinkType.SUPERSEDES, *, id: str, minutes: float = 0) -> Link:
    return Link(id, src, dst, kind.value, at(minutes), "alice", run_id=None)


def test_links_of_a_memory_in_either_direction(store: Store) -> None:
    out, into, other = (
        link("mem_a", "mem_b", id="lnk_1"),
        link("mem_c", "mem_a", id="lnk_2", minutes=1),
        link("mem_b", "mem_c", LinkType.RELATES_TO, id="lnk_3"),
    )
    with store.tx(write=True) as tx:
        for x in (into, out, other):
            tx.add_link(x)
    with store.tx() as tx:
        assert tx.links_of("mem_a") == [out, into]
        assert tx.links_of("mem_z") == []


def test_has_link_reads_either_direction_of_one_type(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_link(link("mem_a", "mem_b", id="lnk_1"))
    with store.tx() as tx:
        assert tx.has_link("mem_a", "mem_b", "supersedes")
        assert tx.has_link("mem_b", "mem_a", "supersedes")
        assert not tx.has_link("mem_a", "mem_b", "contradicts")
        assert not tx.has_link("mem_a", "mem_c", "supersedes")


def test_remove_links_soft_removes_those_pointing_at_a_memory(store: Store) -> None:
    kept = link("mem_a", "mem_x", LinkType.RELATES_TO, id="lnk_kept")
    with store.tx(write=True) as tx:
        tx.add_link(link("mem_a", "mem_old", id="lnk_1"))
        tx.add_link(link("mem_b", "mem_old", id="lnk_2"))
        tx.add_link(link("mem_old", "mem_older", id="lnk_3"))
        tx.add_link(kept)
        removed = tx.remove_links(dst="mem_old", link_type="supersedes", at=at(9))
    assert sorted(x.id for x in removed) == ["lnk_1", "lnk_2"]
    assert all(x.removed_at is None for x in removed)  # as they were
    with store.tx(write=True) as tx:
        assert [x.id for x in tx.links_of("mem_old")] == ["lnk_3"]
        assert not tx.has_link("mem_a", "mem_old", "supersedes")
        assert tx.links_of("mem_a") == [kept]
        assert tx.remove_links(dst="mem_old", link_type="supersedes", at=at(10)) == []
