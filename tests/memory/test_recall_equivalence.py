"""Recall reads only what its answer needs and answers exactly as reading everything did.

``everything_read`` is the plain pipeline recall used to run: every candidate full text alone found read
whole, then its vector in a second statement, and re-affirmations looked up for every candidate. On a
store with many more candidates than hits (provisional, challenged, disputed, stale, reinforced, open
loops, a closed loop), recall's answer must be the same, hit for hit and field for field.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.conflicts.challenge import challenge
from zero_memory.domain.memory import age_days
from zero_memory.domain.records import Channel
from zero_memory.memory import freshness
from zero_memory.memory.imports import import_path
from zero_memory.memory.lifecycle import close_loop, reaffirm
from zero_memory.memory.models import Hit
from zero_memory.memory.recall import (
    CHALLENGE_VERDICTS,
    REINFORCEMENT_WINDOW_DAYS,
    asks,
    recall,
    relevance,
    score,
)
from zero_memory.memory.targets import read_set, session_state
from zero_memory.store import system_tx

MakeApp = Callable[..., App]
SERVICES = ["staging cluster", "billing service", "deploy pipeline", "release train", "auth gateway", "search api"]
TOPICS = ["kubernetes version", "ruff settings", "tenant limits", "retry budget", "cache keys", "log level"]
PEOPLE = ["Dana", "Ilya", "Mara", "Theo", "Noor", "Sven", "Aiko"]
REASONS = ["after the outage", "for the audit", "since the migration", "per the runbook", "until the freeze"]
KINDS = ["fact", "decision", "reference", "task", "open-question", "preference", "fact"]
QUERIES = [
    "staging cluster kubernetes version",
    "billing service tenant limits",
    "which retry budget does the deploy pipeline use",
    "auth gateway cache keys and log level",
    "release train",
]


def notes(rng: random.Random, count: int) -> list[dict[str, str]]:
    return [
        {
            "content": f"{rng.choice(PEOPLE)} set the {rng.choice(SERVICES)} {rng.choice(TOPICS)} to "
            f"{rng.randint(2, 900)} {rng.choice(REASONS)}; the {rng.choice(SERVICES)} follows (note {n})",
            "kind": KINDS[n % len(KINDS)],
            "scope": "core" if n % 3 == 0 else "personal",
        }
        for n in range(count)
    ]


class Clock:
    def __init__(self) -> None:
        self.now = utcnow() - timedelta(days=400)

    def __call__(self) -> datetime:
        return self.now


def everything_read(app: App, caller: Caller, query: str, limit: int) -> list[Hit]:
    """Recall's ranking with every candidate read whole and checked for re-affirmation."""
    config = app.settings.hygiene
    now = app.clock()
    vector = app.embedder.embed([query])[0]
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(tx, vis, None, None, auto_create=False, at=now)
        covered = read_set(tx, vis, ["*"], hinted, session)
        pool = max(config.recall_candidates, limit * 4)
        neighbours = tx.similar(vector, floor=config.recall_similarity, limit=pool, scopes=covered)
        similarity = {n.memory.id: n.similarity for n in neighbours}
        plan = tx.text_plan(query)
        by_text = tx.text_candidates(plan, scopes=covered, limit=pool)
        assert set(by_text) - set(similarity), "full text alone must find some of the candidates"
        found = {n.memory.id: n.memory for n in neighbours if n.memory.scope in vis.readable}
        found.update(tx.get_memories([i for i in by_text if i not in found], vis))
        candidates = [m for m in found.values() if m.live]
        unseen = [m.id for m in candidates if m.id not in similarity]
        similarity.update({i: float(v @ vector) for i, v in tx.memory_vectors(unseen).items()})
        ids = [m.id for m in candidates]
        disputes = tx.open_disputes_for(ids)
        sessions = tx.sessions_served(
            ids, since=now - timedelta(days=REINFORCEMENT_WINDOW_DAYS), channel=Channel.RECALL
        )
        reaffirmed = freshness.affirmed(tx, candidates, now)
    disputed = {d.memory_a for d in disputes} | {d.memory_b for d in disputes if d.memory_b}
    challenged = {d.memory_a for d in disputes if d.verdict in CHALLENGE_VERDICTS}
    scored = [
        (
            score(
                relevance(similarity.get(m.id, 0.0), plan.score(m.content), asks(m)),
                m,
                age_days(m.created_at, now),
                sessions.get(m.id, 0),
                m.id in challenged,
            ),
            m,
        )
        for m in candidates
    ]
    assert len(scored) > 2 * limit, "the store must hold many more candidates than hits"
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    return [
        Hit(
            id=m.id,
            content=m.content,
            kind=m.kind,
            scope=m.scope,
            rank=int(m.rank),
            author_kind=m.author_kind.value,
            agent_name=m.agent_name,
            score=round(value, 6),
            age_days=round(age_days(m.created_at, now), 3),
            disputed=m.id in disputed,
            stale_days=freshness.stale_days_of(m, now, reaffirmed.get(m.id)),
        )
        for value, m in scored[:limit]
    ]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_recall_answers_as_reading_every_candidate_did(make_app: MakeApp, backend: str, tmp_path: Path) -> None:
    clock = Clock()
    app = make_app(clock=clock, backend=backend)
    alice = Caller("alice", client="test")
    rng = random.Random(3)
    for batch in range(4):  # memories of several ages, some core facts past their freshness budget
        path = tmp_path / f"notes-{batch}.jsonl"
        path.write_text("".join(json.dumps(note) + "\n" for note in notes(rng, 60)))
        assert import_path(app, alice, path).imported == 60
        clock.now += timedelta(days=100)
    provisional = [
        write(app, alice, f"{service} {topic} is unsettled", provisional=True).id
        for service, topic in zip(SERVICES, TOPICS, strict=True)
    ]
    with system_tx(app.store, "test") as tx:
        written = [m.id for m in tx.live_memories(owner="alice", limit=1_000)]
        loops = [m.id for m in tx.live_memories(owner="alice", limit=1_000, kinds=["task"])]
    assert len(written) == 246
    challenge(app, alice, written[10], "the cluster moved to a newer version")
    challenge(app, alice, written[25], "the limits changed last month")
    challenge(app, alice, provisional[0], "it settled")
    close_loop(app, alice, loops[0], note="done")
    for n, query in enumerate(QUERIES * 3):
        recall(app, Caller("alice", client="agent", session_id=f"session-{n}"), query, scopes_arg=["*"])
    stale = {h.id for q in QUERIES for h in recall(app, alice, q, scopes_arg=["*"], channel=None).hits if h.stale_days}
    for memory_id in sorted(stale)[:1]:
        reaffirm(app, alice, memory_id)
    clock.now += timedelta(days=30)
    for query in QUERIES:
        for limit in (3, 10):
            answer = recall(app, alice, query, scopes_arg=["*"], limit=limit, channel=None).hits
            assert answer == everything_read(app, alice, query, limit)
    assert len(stale) > 1, "some hits must be past their freshness budget, one of them re-affirmed"
