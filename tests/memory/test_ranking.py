"""The ranking rules of recall, through the real services: relevance first, age and use as bounded
tie-breakers, reinforcement from evidence, challenged memories demoted, open loops that do not decay while
open."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.conflicts.challenge import challenge
from zero_memory.domain.memory import Kind, Memory, Status, age_factor, decay
from zero_memory.domain.records import Channel
from zero_memory.memory.browse import browse
from zero_memory.memory.lifecycle import close_loop, restore_memory
from zero_memory.memory.recall import (
    QUESTION_SIMILARITY,
    RECENCY_BONUS,
    REINFORCEMENT_BONUS,
    REINFORCEMENT_CAP,
    asks,
    recall,
    reinforcement,
    relevance,
    score,
    use_bonus,
)
from zero_memory.store import system_tx

MakeApp = Callable[..., App]
QUERY = "staging cluster kubernetes version"


class Clock:
    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ranked(make_app: MakeApp, clock: Clock) -> App:
    """An app whose clock stands still unless a test moves it, so scores compare exactly."""
    return make_app(clock=clock)


def score_of(app: App, memory_id: str, query: str = QUERY) -> float:
    """The score recall gives a memory, asked the way a benchmark asks: recording nothing."""
    hits = recall(app, Caller("alice", client="probe"), query, scopes_arg=["*"], channel=None).hits
    return next(h.score for h in hits if h.id == memory_id)


def served_in_sessions(app: App, sessions: int, *, calls_each: int = 1) -> None:
    for n in range(sessions):
        for _ in range(calls_each):
            recall(app, Caller("alice", client="agent", session_id=f"session-{n}"), QUERY, scopes_arg=["*"])


def test_reinforcement_grows_slowly_and_stops_at_the_cap() -> None:
    assert reinforcement(0) == 1.0
    assert 1.2 < reinforcement(10) < 1.3
    assert reinforcement(10_000) == REINFORCEMENT_CAP == 1.4


def test_a_memory_served_in_many_sessions_is_boosted_at_most_by_the_cap(ranked: App, alice: Caller) -> None:
    fact = write(ranked, alice, "The staging cluster runs Kubernetes 1.31")
    unused = score_of(ranked, fact.id)
    served_in_sessions(ranked, 60)
    assert score_of(ranked, fact.id) == pytest.approx(unused + REINFORCEMENT_BONUS, rel=1e-4)


def test_many_recalls_in_one_session_count_once(ranked: App, alice: Caller) -> None:
    fact = write(ranked, alice, "The staging cluster runs Kubernetes 1.31")
    unused = score_of(ranked, fact.id)
    served_in_sessions(ranked, 1, calls_each=5)
    assert score_of(ranked, fact.id) == pytest.approx(unused + use_bonus(1), rel=1e-4)
    served_in_sessions(ranked, 2, calls_each=3)  # session-0 again, and session-1
    assert score_of(ranked, fact.id) == pytest.approx(unused + use_bonus(2), rel=1e-4)


def test_every_member_s_agent_sessions_reinforce_a_shared_memory_alike_for_each_reader(ranked: App) -> None:
    """Reinforcement is evidence about the memory, not about the reader: sessions of another member's agents
    count for everyone who can read it, on both stores (PostgreSQL's policies hide other users' surfacings
    from the caller, so the count is taken for the caller by the database)."""
    from zero_memory.access.projects import create_project, grant

    with system_tx(ranked.store, "test", write=True) as tx:
        create_project(tx, "alice", "shared")
        grant(tx, "alice", "proj.alice.shared", "bob", "reader")
    fact = write(
        ranked, Caller("alice", client="test"), "The staging cluster runs Kubernetes 1.31", scope="proj.alice.shared"
    )
    unused = score_of(ranked, fact.id)
    for n in range(3):
        recall(ranked, Caller("bob", client="agent", session_id=f"bob-{n}"), QUERY, scopes_arg=["*"])
    served_in_sessions(ranked, 2)
    assert score_of(ranked, fact.id) == pytest.approx(unused + use_bonus(5), rel=1e-4)
    bob_sees = recall(ranked, Caller("bob", client="probe"), QUERY, scopes_arg=["*"], channel=None).hits
    assert next(h.score for h in bob_sees if h.id == fact.id) == pytest.approx(unused + use_bonus(5), rel=1e-4)


def test_the_dashboard_the_cli_channel_and_benchmarks_never_reinforce(ranked: App, alice: Caller) -> None:
    fact = write(ranked, alice, "The staging cluster runs Kubernetes 1.31")
    unused = score_of(ranked, fact.id)
    for _ in range(5):
        assert browse(ranked, alice, query=QUERY).cards
        recall(ranked, alice, QUERY, channel=Channel.CLI, session_id="a-shell")
        recall(ranked, alice, QUERY, channel=None, session_id="a-benchmark")
    assert score_of(ranked, fact.id) == pytest.approx(unused, rel=1e-6)
    with system_tx(ranked.store, "test") as tx:
        # The shell's recalls are still traffic for re-examination; the dashboard's and the benchmark's are not.
        assert tx.surfacings_of([fact.id], since=ranked.clock() - timedelta(days=1)) == {fact.id: 5}


def test_a_challenged_memory_is_demoted_and_its_surfacings_no_longer_lift_it(ranked: App, alice: Caller) -> None:
    fact = write(ranked, alice, "The staging cluster runs Kubernetes 1.31")
    unused = score_of(ranked, fact.id)
    served_in_sessions(ranked, 10)
    assert score_of(ranked, fact.id) > unused
    challenge(ranked, alice, fact.id, "the cluster was upgraded to 1.32 last week")
    demoted = score_of(ranked, fact.id)
    assert demoted == pytest.approx(unused * 0.6, rel=1e-4)
    served_in_sessions(ranked, 10)
    assert score_of(ranked, fact.id) == pytest.approx(demoted, rel=1e-6)


def test_open_loops_do_not_decay_while_open(ranked: App, alice: Caller, clock: Clock) -> None:
    task = write(ranked, alice, "TODO: upgrade the staging cluster to Kubernetes 1.32", kind="task")
    question = write(
        ranked, alice, "Open question: should staging run the same Kubernetes as prod?", kind="open-question"
    )
    fact = write(ranked, alice, "The staging cluster runs Kubernetes 1.31", kind="fact")
    fresh = {m.id: score_of(ranked, m.id) for m in (task, question, fact)}
    clock.now += timedelta(days=200)
    assert score_of(ranked, task.id) == pytest.approx(fresh[task.id], rel=1e-6)
    assert score_of(ranked, question.id) == pytest.approx(fresh[question.id], rel=1e-6)
    aged = fresh[fact.id] - RECENCY_BONUS * (1 - decay(Kind.FACT, 200))
    assert score_of(ranked, fact.id) == pytest.approx(aged, rel=1e-4)


def test_a_closed_loop_leaves_recall_and_a_reopened_one_comes_back_undecayed(
    ranked: App, alice: Caller, clock: Clock
) -> None:
    task = write(ranked, alice, "TODO: upgrade the staging cluster to Kubernetes 1.32", kind="task")
    fresh = score_of(ranked, task.id)
    clock.now += timedelta(days=60)
    close_loop(ranked, alice, task.id, note="upgraded")
    hits = recall(ranked, alice, QUERY, scopes_arg=["*"], channel=None).hits
    assert task.id not in {h.id for h in hits}
    restore_memory(ranked, alice, task.id)
    assert score_of(ranked, task.id) == pytest.approx(fresh, rel=1e-6)


def a_memory(kind: Kind) -> Memory:
    now = utcnow()
    return Memory(
        id="mem_t",
        owner="a",
        scope="user.a",
        kind=kind,
        content="x",
        author_kind="agent",  # type: ignore[arg-type]
        agent_name="t",
        rank=1,  # type: ignore[arg-type]
        source={},
        created_at=now,
        updated_at=now,
    )


def test_a_closed_loop_decays_by_its_kind() -> None:
    loop = a_memory(Kind.TASK)
    assert age_factor(loop, 28) == 1.0
    closed = dataclasses.replace(loop, status=Status.INVALIDATED)
    assert age_factor(closed, 28) == pytest.approx(0.25)


MARGIN = RECENCY_BONUS + REINFORCEMENT_BONUS
relevances = st.floats(min_value=0.0, max_value=1.7 - MARGIN - 1e-6)
kinds = st.sampled_from(list(Kind))
ages = st.floats(min_value=0.0, max_value=20 * 365)
sessions = st.integers(min_value=0, max_value=1_000)


@given(relevances, st.floats(min_value=MARGIN + 1e-6, max_value=1.7), kinds, kinds, ages, ages, sessions, sessions)
def test_age_kind_and_use_never_put_a_clearly_less_relevant_memory_first(
    low: float, gap: float, kind_a: Kind, kind_b: Kind, age_a: float, age_b: float, used_a: int, used_b: int
) -> None:
    """A memory more relevant by more than the two bonuses stays first, whatever the kinds, ages and uses."""
    high = low + gap
    assert score(high, a_memory(kind_a), age_a, used_a, False) > score(low, a_memory(kind_b), age_b, used_b, False)


@given(relevances, st.sampled_from([Kind.EPISODE, Kind.FACT, Kind.DECISION]), st.floats(0, 365), st.floats(1, 365))
def test_of_two_equally_relevant_memories_of_a_kind_the_newer_comes_first(
    relevance: float, kind: Kind, age: float, older_by: float
) -> None:
    """Within a year or two, while the decay has not yet worn the bonus down to nothing."""
    memory = a_memory(kind)
    assert score(relevance, memory, age, 0, False) > score(relevance, memory, age + older_by, 0, False)


def test_an_old_episode_that_answers_beats_a_fresh_one_that_shares_a_word(
    ranked: App, alice: Caller, clock: Clock
) -> None:
    """Eight months (eight episode half-lives) once weighed an exact answer at 0.004 of a fresh text."""
    answer = write(
        ranked, alice, "Maya: I ran my first half marathon in Lisbon, finished in 1 hour 52 minutes!", kind="episode"
    )
    clock.now += timedelta(days=240)
    fresh = write(ranked, alice, "Jonas: Lisbon was sunny today, we walked by the river.", kind="episode")
    hits = recall(ranked, alice, "When did Maya run the half marathon in Lisbon?", scopes_arg=["*"], channel=None).hits
    assert [h.id for h in hits][:2] == [answer.id, fresh.id]


@pytest.mark.parametrize(
    ("content", "kind", "asking"),
    [
        ("How did it go?", Kind.EPISODE, True),
        ("Did you like Seville?  ", Kind.FACT, True),
        ("Seville was lovely, did you go?", Kind.EPISODE, True),
        ("Should we pin the SDK?", Kind.OPEN_QUESTION, False),  # an open loop is meant to be found
        ("Why the queue stalls? The consumer's lease expires.", Kind.GOTCHA, False),
        ("We went to Seville.", Kind.EPISODE, False),
    ],
)
def test_a_memory_that_asks_counts_a_share_of_its_similarity_and_all_of_its_words(
    content: str, kind: Kind, asking: bool
) -> None:
    memory = dataclasses.replace(a_memory(kind), content=content)
    assert asks(memory) is asking
    share = QUESTION_SIMILARITY if asking else 1.0
    assert relevance(0.4, 0.5, asks(memory)) == pytest.approx(share * 0.4 + relevance(0.0, 0.5))
