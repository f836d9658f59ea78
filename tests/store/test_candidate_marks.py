"""What recall reads of its candidates in one call (``candidate_marks``) is what the three separate reads
return: the open disputes, the sessions served on the channel since the moment, the anchors."""

from __future__ import annotations

from datetime import timedelta

from tests.store.factories import add_users, at, memory, put
from tests.store.test_anchors import anchor
from tests.store.test_disputes import dispute
from zero_memory.domain.records import Channel, DisputeStatus
from zero_memory.store import Store
from zero_memory.store.ports.search import CandidateMarks


def test_the_marks_are_the_open_disputes_the_sessions_and_the_anchors(store: Store) -> None:
    notes = [memory(f"note {n}") for n in range(5)]
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        for note in notes:
            put(tx, note)
        a, b, c, d, e = (note.id for note in notes)
        tx.add_dispute(dispute("dsp_1", a, b))
        tx.add_dispute(dispute("dsp_2", c, None, verdict="challenged"))
        tx.add_dispute(dispute("dsp_3", a, d, status=DisputeStatus.RESOLVED))
        tx.add_dispute(dispute("dsp_4", e, a))
        tx.add_surfacings("alice", [a, b, a], at(10), session_id="s1", channel=Channel.RECALL)
        tx.add_surfacings("bob", [a], at(11), session_id="s2", channel=Channel.RECALL)
        tx.add_surfacings("bob", [b], at(12), session_id="s3", channel=Channel.CLI)
        tx.add_surfacings("bob", [c], at(-60 * 24 * 100), session_id="s4", channel=Channel.RECALL)
        tx.add_surfacings("bob", [d], at(13), session_id=None, channel=Channel.RECALL)
        tx.set_anchors(a, [anchor(a, "net/client.py", "retry"), anchor(a, "db/0042.sql")], at(1))
        tx.set_anchors(c, [anchor(c, "api/routes.py", "health")], at(1))
    asked = [a, b, c, d, a]
    since = at() - timedelta(days=90)
    with store.tx() as tx:
        marks = tx.candidate_marks(asked, since=since, channel=Channel.RECALL)
        assert marks == CandidateMarks(
            tx.open_disputes_for(asked),
            tx.sessions_served(asked, since=since, channel=Channel.RECALL),
            tx.anchors_of(asked),
        )
        assert [x.id for x in marks.disputes] == ["dsp_1", "dsp_2", "dsp_4"]
        assert marks.sessions == {a: 2, b: 1}
        assert {i: [r.path for r in records] for i, records in marks.anchors.items()} == {
            a: ["db/0042.sql", "net/client.py"],
            c: ["api/routes.py"],
        }
        assert tx.candidate_marks([], since=since, channel=Channel.RECALL) == CandidateMarks()


def test_a_store_with_no_marks_has_none_to_read(store: Store) -> None:
    note = memory("a quiet note")
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, note)
    with store.tx() as tx:
        assert tx.candidate_marks([note.id], since=at(), channel=Channel.RECALL) == CandidateMarks()
