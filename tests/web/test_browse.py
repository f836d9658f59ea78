"""Listing memories for the dashboard: every visible scope, each lifecycle, nobody else's."""

from __future__ import annotations

import pytest

from tests.web.helpers import Seeder, unique
from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.browse import browse


@pytest.fixture
def seed(app: App) -> Seeder:
    return Seeder(app)


ALICE = Caller("alice", client="dashboard", author_kind="human")


def ids(app: App, **kwargs: object) -> list[str]:
    return [c.id for c in browse(app, ALICE, **kwargs).cards]  # type: ignore[arg-type]


def test_without_a_query_live_memories_come_newest_first_from_every_visible_scope(app: App, seed: Seeder) -> None:
    scope = seed.project("bob", "atlas", members=("alice",))
    first = seed.memory("alice", unique("first"))
    core = seed.memory("alice", unique("second"), scope="core")
    shared = seed.memory("bob", unique("third"), scope=scope)
    seed.memory("bob", unique("bob's own"))
    gone = seed.invalidated("alice", unique("gone"))
    assert ids(app) == [shared, core, first]
    assert ids(app, lifecycle="invalidated") == [gone]
    assert ids(app, lifecycle="all") == [gone, shared, core, first]


def test_a_short_user_name_does_not_see_a_longer_ones_scope(app: App, seed: Seeder) -> None:
    """``user.bo`` is a prefix of ``user.bob``: bo's list must hold bo's memories only."""
    from zero_memory.access import users

    with app.store.tx(write=True) as tx:
        users.add_user(tx, "bo")
    for i in range(3):
        seed.memory("bob", unique(f"bob writes a lot {i}"))
    mine = seed.memory("bo", unique("bo's only memory"))
    assert [c.id for c in browse(app, Caller("bo"), limit=2).cards] == [mine]


def test_a_query_ranks_live_memories_and_walks_invalidated_ones_by_their_words(app: App, seed: Seeder) -> None:
    live = seed.memory("alice", unique("The staging database listens on port 5433"))
    gone = seed.invalidated("alice", unique("The staging database listened on port 5432"))
    seed.memory("bob", unique("Bob's staging database is elsewhere"))
    assert ids(app, query="staging database") == [live]
    assert ids(app, query="staging DATABASE", lifecycle="invalidated") == [gone]
    assert ids(app, query="staging database", lifecycle="all") == [live, gone]
    assert ids(app, query="kubernetes", lifecycle="invalidated") == []


def test_the_limit_keeps_the_newest_and_says_there_is_more(app: App, seed: Seeder) -> None:
    made = [seed.invalidated("alice", unique(f"old note {i}")) for i in range(4)]
    listing = browse(app, ALICE, lifecycle="invalidated", limit=3)
    assert [c.id for c in listing.cards] == made[:0:-1] and listing.more
    assert not browse(app, ALICE, lifecycle="invalidated", limit=4).more


def test_cards_say_which_memories_are_disputed(app: App, seed: Seeder) -> None:
    _, a, b = seed.pair("alice", unique("Queue A"), unique("Queue B"))
    calm = seed.memory("alice", unique("Nothing to see"))
    disputed = {c.id: c.disputed for c in browse(app, ALICE).cards}
    assert disputed[a] and disputed[b] and not disputed[calm]


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"lifecycle": "deleted"}, "lifecycle"), ({"limit": 0}, "limit"), ({"limit": 501}, "limit")]
)
def test_bad_arguments_are_refused(app: App, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(errors.ZMError, match=message):
        browse(app, ALICE, **kwargs)  # type: ignore[arg-type]
