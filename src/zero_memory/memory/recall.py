"""Recall: hybrid retrieval over the caller's read set.

Vector similarity and full-text search are fused by reciprocal rank fusion,
then multiplied by a per-kind age decay and a reinforcement factor (how often
recall served the memory lately). Provisional memories sit below
authoritative ones at equal relevance; challenged memories rank lower;
disputed ones are flagged. Every hit returned to a client is recorded as a
surfacing, with its session and channel.
"""

from __future__ import annotations

import math
from datetime import timedelta

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain import scopes
from zero_memory.domain.memory import Kind, Memory, Rank, age_days, decay, stale_days
from zero_memory.domain.records import Channel
from zero_memory.memory.models import Hit, RecallResult
from zero_memory.memory.targets import read_set, session_state
from zero_memory.memory.validation import check_fields, check_text

RRF_K = 60
MAX_LIMIT = 50
PROVISIONAL_FACTOR = 0.85
CHALLENGED_FACTOR = 0.6
REINFORCEMENT_WINDOW_DAYS = 90
CHALLENGE_VERDICTS = frozenset({"challenged", "stale_suspect", "outdated"})


def rrf(rankings: list[list[str]]) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for position, memory_id in enumerate(ranking):
            fused[memory_id] = fused.get(memory_id, 0.0) + 1.0 / (RRF_K + position + 1)
    return fused


def reinforcement(surfacings: int) -> float:
    """A gentle boost for what recall keeps serving: 1.0 unused, ~1.24 at 10 surfacings."""
    return 1.0 + 0.1 * math.log1p(surfacings)


def score(base: float, memory: Memory, age: float, surfacings: int, challenged: bool) -> float:
    value = base * decay(memory.kind, age) * reinforcement(surfacings)
    if memory.rank == Rank.PROVISIONAL:
        value *= PROVISIONAL_FACTOR
    if challenged:
        value *= CHALLENGED_FACTOR
    return value


def recall(
    app: App,
    caller: Caller,
    query: str,
    *,
    scopes_arg: list[str] | None = None,
    kinds: list[Kind] | None = None,
    limit: int = 10,
    project_hint: str | None = None,
    session_id: str | None = None,
    channel: Channel | None = Channel.RECALL,
) -> RecallResult:
    """Recall memories, recording the hits as surfacings on ``channel`` with the session.

    ``channel=None`` records nothing (a person browsing the dashboard, a
    benchmark): surfacings measure what agents and their users are served, and
    drive re-examination and reinforcement."""
    check_text("query", query, max_chars=4_000)
    check_fields({"query": query, "project_hint": project_hint, "session_id": session_id})
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.validation(f"limit: must be between 1 and {MAX_LIMIT}")
    config = app.settings.hygiene
    now = app.clock()
    vector = app.embedder.embed([query])[0]
    write = project_hint is not None
    with app.store.tx(write=write) as tx:
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(
            tx,
            vis,
            session_id or caller.session_id,
            project_hint,
            auto_create=app.settings.auto_create_projects,
            at=now,
        )
        covered = read_set(tx, vis, scopes_arg, hinted, session)
        pool = max(config.recall_candidates, limit * 4)
        by_vector = [
            n.memory.id
            for n in tx.similar(vector, floor=config.recall_similarity, limit=pool, scopes=covered, kinds=kinds or None)
        ]
        by_text = tx.fulltext(query, scopes=covered, limit=pool)
        fused = rrf([by_vector, by_text])
        found = tx.get_memories(list(fused), vis)
        candidates = [m for m in found.values() if m.live and (not kinds or m.kind in kinds)]
        disputes = tx.open_disputes_for([m.id for m in candidates])
        surfacings = tx.surfacings_of([m.id for m in candidates], since=now - timedelta(days=REINFORCEMENT_WINDOW_DAYS))
    disputed = {d.memory_a for d in disputes} | {d.memory_b for d in disputes if d.memory_b}
    challenged = {d.memory_a for d in disputes if d.verdict in CHALLENGE_VERDICTS}
    ranked = sorted(
        (
            (score(fused[m.id], m, age_days(m.created_at, now), surfacings.get(m.id, 0), m.id in challenged), m)
            for m in candidates
        ),
        key=lambda pair: (-pair[0], pair[1].id),
    )[:limit]
    hits = [
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
            stale_days=stale_days(m.kind, scopes.is_core(m.scope), age_days(m.created_at, now)),
        )
        for value, m in ranked
    ]
    if hits and channel is not None:
        with app.store.tx(write=True) as tx:
            tx.add_surfacings(caller.uid, [h.id for h in hits], now, session_id=session.session_id, channel=channel)
    return RecallResult(hits=hits, session=session.info)
