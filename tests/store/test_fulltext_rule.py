"""The full-text rule both stores share (store/fulltext.py): the same plan, candidates and ranking on each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, memory, put, visibility
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store import SYSTEM, Store, fulltext, open_store
from zero_memory.store.fulltext import TextPlan, idf, plan
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.stems import stem, stems_of
from zero_memory.store.terms import terms, words_of

API = "proj.alice.api"


# -- the rule, without a store ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "budget", "matched"),
    [
        ({"e4711": 1, "service": 30, "nightly": 12}, 3, ("e4711",)),
        ({"e4711": 1, "service": 30, "nightly": 2}, 3, ("e4711", "nightly")),
        ({"e4711": 1, "service": 30, "nightly": 2}, 100, ("e4711", "nightly", "service")),
        ({"service": 30, "nightly": 12}, 3, ()),
        ({"service": 30, "nightly": 0}, 100, ("service",)),
    ],
)
def test_the_rarest_words_are_matched_while_their_postings_fit_the_budget(
    counts: dict[str, int], budget: int, matched: tuple[str, ...]
) -> None:
    assert plan(["service", "nightly", "e4711"], 40, counts, budget=budget).matched == matched


@pytest.mark.parametrize(
    ("documents", "budget"), [(40, 5_000), (10_000, 5_000), (50_000, 10_000), (100_000, 20_000), (1_000_000, 20_000)]
)
def test_the_budget_is_a_fifth_of_the_store_within_its_floor_and_its_cap(documents: int, budget: int) -> None:
    assert fulltext.postings_budget(documents) == budget


def test_a_word_held_by_a_tenth_of_the_store_chooses_candidates_in_a_large_store_only() -> None:
    """At 10,000 memories the words of half the store fit 20,000 postings and bought nothing; at 100,000 the
    words of a fifth of it do."""
    assert plan(["deploy", "release"], 10_000, {"deploy": 300, "release": 6_000}).matched == ("deploy",)
    assert plan(["deploy", "release"], 100_000, {"deploy": 3_000, "release": 16_000}).matched == (
        "deploy",
        "release",
    )


def test_words_no_memory_holds_are_dropped_and_rarer_words_weigh_more() -> None:
    weighed = plan(["service", "kubernetes", "e4711"], 40, {"service": 30, "e4711": 1, "kubernetes": 0})
    assert set(weighed.weights) == {"service", "e4711"}
    assert weighed.weights["e4711"] > weighed.weights["service"] > 0
    assert idf(40, 1) > idf(40, 30) > 0


def test_a_text_scores_the_share_of_the_query_weight_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    weighed = TextPlan({"servic": 1, "e4711": 3}, ("e4711",), forms=frozenset({"service", "e4711"}))
    scores = [weighed.score(t) for t in ("The service fails with E4711.", "E4711: licence expired", "A service")]
    assert 1.0 > scores[0] > scores[1] > scores[2] > 0.0
    assert weighed.score("Nothing here") == 0.0
    assert TextPlan().score("anything") == 0.0
    monkeypatch.setattr(fulltext, "K1", 0.0)  # no term frequency: the share of the weight, exactly
    assert [weighed.score(t) for t in ("The service fails with E4711.", "E4711: licence expired", "A service")] == [
        1.0,
        0.75,
        0.25,
    ]


def test_a_word_said_twice_counts_more_than_once_and_never_more_than_its_weight() -> None:
    weighed = plan(["redi"], 40, {"redi": 3}, forms=frozenset({"redis"}))
    once, twice = weighed.score("Restart redis after the upgrade"), weighed.score("Restart redis after redis upgrades")
    assert 0.0 < once < twice < 1.0


def test_a_word_found_in_another_form_counts_a_share_of_its_weight() -> None:
    weighed = plan(["deploy"], 40, {"deploy": 3}, forms=frozenset({"deploy"}))
    assert weighed.score("Ops: deploys happen on Tuesdays") == pytest.approx(
        weighed.score("Ops: deploy happens on Tuesdays") * fulltext.INFLECTION_SHARE
    )


def test_words_no_memory_holds_keep_the_few_common_words_found_from_standing_for_the_whole_query() -> None:
    common = plan(["reschedul", "meet"], 1000, {"meet": 200, "reschedul": 0})
    assert common.absent > 0 and common.score("Looking forward to meeting you") < 0.5
    rare = plan(["reschedul", "vendor", "invoic"], 1000, {"vendor": 2, "invoic": 3, "reschedul": 0})
    assert rare.absent == 0  # the words found already weigh more than a word no memory holds
    assert plan(["meet"], 1000, {"meet": 200}).absent == 0


def test_in_a_small_store_a_word_no_memory_holds_weighs_what_it_would_in_a_large_one() -> None:
    # In a dozen memories, "meet" held by one weighs nearly what "reschedul", held by none, would: the
    # store can't tell a rare word from a common one, so its absences weigh as in a store that could.
    small = plan(["reschedul", "meet"], 12, {"meet": 1, "reschedul": 0})
    assert small.weights["meet"] > 0.6 * idf(12, 0) * fulltext.WEIGHT_SCALE
    assert small.score("Looking forward to meeting you") < 0.25
    assert small.total == round(idf(fulltext.ABSENT_DOCUMENTS, 0) * fulltext.WEIGHT_SCALE)


@pytest.mark.parametrize(
    "text",
    [
        "The billing-service uses ruff; billing_service does not.",
        "billing2 rebilling BILLING billings (billing)",
        "Été: l'été-x et ÉTÉ_2, straße STRASSE",
        "ruff.toml v2.3 e4711/e4711 e47110",
        "",
    ],
)
def test_a_word_counts_in_a_text_where_it_stands_whole_as_the_text_splits_into_words(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "K1", 0.0)
    words = terms("billing ruff été straße e4711 v2 service toml")
    weighed = TextPlan({stem(w): n + 1 for n, w in enumerate(words)}, forms=frozenset(words))
    present = set(stems_of(text))
    exact = words_of(text)
    share = {w: 1.0 if w in exact else fulltext.INFLECTION_SHARE for w in words}
    expected = sum(weighed.weights[stem(w)] * share[w] for w in words if stem(w) in present) / weighed.total
    assert weighed.score(text) == pytest.approx(expected)


def test_words_split_on_punctuation_and_underscores_as_both_indexes_do() -> None:
    words = ["ops", "4963", "docs", "runbooks", "tracing", "s3", "md", "v2"]
    assert terms("OPS-4963 docs/runbooks/tracing_s3.md v2.3") == words


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sets(st.integers(1, 60), max_size=25), st.integers(1, 4)),  # a word's rows and its weight
        max_size=fulltext.MASKED_WORDS + 3,  # beyond the masks too
    )
)
def test_candidates_rank_by_the_weight_of_the_words_they_hold_then_newest_first(
    words: list[tuple[set[int], int]],
) -> None:
    held: dict[int, int] = {}
    for rows, weight in words:
        for row in rows:
            held[row] = held.get(row, 0) + weight
    expected = sorted(held, key=lambda row: (-held[row], -row))
    postings = [np.array(sorted(rows), dtype=np.int64) for rows, _ in words]
    ranked = fulltext.rank_postings(postings, [w for _, w in words])
    assert ranked.tolist() == expected


# -- the rule on both stores -----------------------------------------------------------------------


@pytest.fixture
def large(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A corpus 'large' for a budget of 3 postings: 30 memories, 'service' in every one of them."""
    monkeypatch.setattr(fulltext, "POSTINGS_BUDGET", 3)
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(29):
            put(tx, memory(f"The service number {n} restarts nightly", minutes=n))
        put(tx, memory("The service fails with error E4711 when the licence expired", minutes=30))
    return store


def search(store: Store, query: str) -> list[str]:
    with store.tx() as tx:
        found = tx.fulltext(query, scopes=[API], limit=10)
        contents = tx.get_memories(found, SYSTEM)
        return [contents[i].content for i in found]


def test_a_rare_identifier_is_found_beside_a_word_every_memory_has(large: Store) -> None:
    with large.tx() as tx:
        assert tx.text_plan("service E4711").matched == ("e4711",)
    assert search(large, "service E4711") == ["The service fails with error E4711 when the licence expired"]


def test_a_memory_that_says_the_word_twice_and_one_holding_its_inflection_rank_as_the_rule_weighs_them(
    store: Store,
) -> None:
    # Newer first among equals: without term frequency and stems, the order would be the reverse.
    texts = ["Restart redis, then restart the workers", "Restart redis after an upgrade", "Redis restarts weekly"]
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n, text in enumerate(texts):
            put(tx, memory(text, minutes=n))
    assert search(store, "restart") == texts


def test_a_query_of_common_words_only_matches_nothing_but_is_still_weighed(large: Store) -> None:
    with large.tx() as tx:
        weighed = tx.text_plan("service restarts")
    assert weighed.matched == ()
    assert set(weighed.weights) == {"servic", "restart"}
    assert search(large, "service restarts") == []


def test_candidates_are_ordered_by_the_weight_of_their_matched_words_then_newest_first(store: Store) -> None:
    rows = [
        memory("Deploys need the VPN and the bastion host", minutes=1),
        memory("The bastion host rotates its keys weekly", minutes=2),
        memory("Only the VPN reaches the metrics dashboard", minutes=3),
        memory("The VPN and the bastion host are both in eu-west", minutes=4),
    ]
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for row in rows:
            put(tx, row)
    with store.tx() as tx:
        weighed = tx.text_plan("vpn bastion")
        ranked = tx.text_candidates(weighed, scopes=[API], limit=10)
    # Both words are as rare: two rows hold both, then the rows holding one, newer first within each.
    assert ranked == [rows[3].id, rows[0].id, rows[2].id, rows[1].id]


def test_the_candidates_briefs_and_vectors_are_those_of_the_candidates(store: Store) -> None:
    """``text_briefs`` reads what ``briefs_with_vectors`` reads of ``text_candidates``, for a reader, also where
    most of the rows holding the word are not live or not in the scopes asked (SQLite reads the ranking a
    slice at a time)."""
    rows = []
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(40):
            status = Status.LIVE if n % 5 == 0 else Status.INVALIDATED
            reason = None if status is Status.LIVE else InvalidationReason.FORGOTTEN
            scope = "proj.alice.web" if n % 10 == 5 else API
            rows.append(put(tx, memory(f"The VPN gate {n}", minutes=n, status=status, reason=reason, scope=scope)))
        hidden = put(tx, memory("The VPN gate of the other team", minutes=50, scope="proj.alice.ops"))
    reader = visibility("alice", API, "proj.alice.web")
    with store.tx() as tx:
        weighed = tx.text_plan("vpn")
        for limit in (1, 3, 5, 20):
            scopes = [API, "proj.alice.web", "proj.alice.ops"]
            expected = tx.briefs_with_vectors(tx.text_candidates(weighed, scopes=scopes, limit=limit), reader)
            found = tx.text_briefs(weighed, scopes=scopes, limit=limit, reader=reader)
            assert {i: b for i, (b, _) in found.items()} == {i: b for i, (b, _) in expected.items()}
            assert all(np.array_equal(v, expected[i][1]) for i, (_, v) in found.items())
            assert hidden.id not in found
        assert set(tx.text_briefs(weighed, scopes=[API], limit=20, reader=SYSTEM)) == {
            m.id for n, m in enumerate(rows) if n % 10 == 0
        }
        assert tx.text_briefs(tx.text_plan("nothing matches"), scopes=[API], limit=5, reader=reader) == {}


# -- both stores side by side ----------------------------------------------------------------------


@pytest.fixture
def both(tmp_path: Path, pg_url: str) -> Iterator[tuple[Store, Store]]:
    # PostgreSQL's acts as a system pass: these reads cross owners (row-level security is on).
    stores = (open_store(sqlite_url(tmp_path), dim=DIM), cast(Store, AsSystem(PostgresStore.open(pg_url, dim=DIM))))
    yield stores
    for opened in stores:
        opened.close()


NOTES = [
    "The billing service times out calls to redis after 30 seconds",
    "Billing retries failed postgres writes three times with backoff",
    "The search service caches results in redis for five minutes",
    "Error E4711 from billing means the invoice token expired",
    "Gotcha: the billing integration tests hang without a running postgres",
    "Reference: the billing runbook lives at docs/runbooks/billing-redis-12.md",
    "Incident OPS-4963: billing ran out of database connections during the deploy",
    "The checkout team prefers postgres over redis for carts",
]
QUERIES = [
    "how long does billing wait for redis",
    "E4711 billing",
    "billing runbook redis",
    "ops 4963",
    "which database does checkout prefer for carts",
    "billing tests hang postgres",
]


def test_both_stores_plan_and_rank_the_same_queries_alike(both: tuple[Store, Store]) -> None:
    for opened in both:
        with opened.tx(write=True) as tx:
            add_users(tx, "alice")
            for n, note in enumerate(NOTES):
                put(tx, memory(note, minutes=n, id=f"mem_{n:02d}"))
    for query in QUERIES:
        answers = []
        for opened in both:
            with opened.tx() as tx:
                weighed = tx.text_plan(query)
                answers.append((weighed.weights, weighed.matched, tx.fulltext(query, scopes=[API], limit=10)))
        assert answers[0] == answers[1], query
        assert answers[0][2], query


def test_postgresql_takes_common_words_counts_from_its_statistics(pg_store: PostgresStore) -> None:
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(200):
            extra = " with redis" if n % 4 == 0 else ""
            put(tx, memory(f"Service {n} restarts nightly{extra}", minutes=n))
    with pg_store.tx() as tx:
        before = tx.text_plan("service redis restarts")
    with pg_store.tx(write=True) as tx:
        tx._exec("ANALYZE memories")
    pg_store._common = None
    with pg_store.tx() as tx:
        assert "servic" in pg_store.common_words(tx.conn)
        after = tx.text_plan("service redis restarts")
    assert after == before
