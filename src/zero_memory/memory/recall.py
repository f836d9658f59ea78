"""Recall: hybrid retrieval over the caller's read set.

Candidates come from both sides: the nearest vectors, and the memories holding
the query's rarest words (the full-text plan, store/fulltext.py). Each
candidate's relevance is its cosine similarity to the query (half of it for a
memory that is itself a question, ``QUESTION_SIMILARITY``) plus
``TEXT_WEIGHT`` times its full-text score (the share of the query's word
weight its text holds). Age and use break ties, they do not cancel relevance:
to the relevance are added a recency bonus, at most ``RECENCY_BONUS`` (the
per-kind age decay: all of it when new, none when long past; all of it for an
open loop while it is open), and a use bonus, at most ``REINFORCEMENT_BONUS``
(how many agent sessions recall served it lately, counted once per session,
up to the reinforcement cap). So a memory more relevant by more than the two
bonuses together is never ranked below a less relevant one, however old.
Provisional memories sit below authoritative ones at equal relevance; a
challenged memory is demoted and never reinforced; disputed ones are flagged.
The defaults and how they were measured: docs/calibration.md.

Every hit returned to a client is recorded as a surfacing, with its session
and channel; only surfacings of the ``recall`` channel reinforce.

A recall is three steps: gather the candidates and what their rank depends on
from the store (``_gather``), rank and select them (``rank``, pure), record
what was served.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from concurrent.futures import Future
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain.memory import OPEN_LOOP_KINDS, Brief, Kind, Memory, Rank, age_days, age_factor
from zero_memory.domain.records import Channel, Visibility
from zero_memory.embedding.base import embed_queries
from zero_memory.embedding.query_process import Asked
from zero_memory.memory import freshness
from zero_memory.memory.anchoring import code_changed
from zero_memory.memory.models import Hit, RecallResult
from zero_memory.memory.targets import read_set, session_state, settle_hint
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.store.base import Tx
from zero_memory.store.fulltext import TextPlan
from zero_memory.store.ports.search import CandidateMarks
from zero_memory.telemetry import Surfacing

MAX_LIMIT = 50
# Fusion: relevance = cosine similarity + TEXT_WEIGHT × full-text score (0 to 1).
TEXT_WEIGHT = 0.7
# What a memory that asks (its text ends with "?") counts of its similarity: the model puts questions near
# questions, so a question asked of recall meets every turn that asked something ("What was it like?").
QUESTION_SIMILARITY = 0.5
PROVISIONAL_FACTOR = 0.85
CHALLENGED_FACTOR = 0.6
# Reinforcement: 1 + SLOPE × ln(1 + sessions), at most CAP; sessions within the window.
REINFORCEMENT_SLOPE = 0.1
REINFORCEMENT_CAP = 1.4
# The tie-breakers, in units of relevance: recency adds up to RECENCY_BONUS (its age factor times it), use up
# to REINFORCEMENT_BONUS (at the cap). A relevance margin above their sum is never overturned.
RECENCY_BONUS = 0.1
REINFORCEMENT_BONUS = 0.05
REINFORCEMENT_WINDOW_DAYS = 90
CHALLENGE_VERDICTS = frozenset({"challenged", "stale_suspect", "outdated"})


def asks(memory: Memory | Brief) -> bool:
    """A memory that is a question, not a statement: a turn that asked something. An open loop is
    not one of them (an open question is meant to be found by its subject)."""
    return memory.kind not in OPEN_LOOP_KINDS and memory.content.rstrip().endswith("?")


def relevance(similarity: float, text_score: float, question: bool = False) -> float:
    """How well a memory answers the query, before age, use and provenance: 0 to 1 + TEXT_WEIGHT. The
    similarity of a memory that asks (``question``) counts ``QUESTION_SIMILARITY`` of itself: a question
    answers none, and its words still count whole."""
    return max(0.0, similarity) * (QUESTION_SIMILARITY if question else 1.0) + TEXT_WEIGHT * text_score


def reinforcement(sessions: int) -> float:
    """The boost of a memory agents keep being served: 1.0 unused, ~1.24 after 10 sessions, at most the cap."""
    return min(REINFORCEMENT_CAP, 1.0 + REINFORCEMENT_SLOPE * math.log1p(sessions))


@lru_cache(maxsize=1024)
def use_bonus(sessions: int) -> float:
    """The use tie-breaker: 0 unused, ``REINFORCEMENT_BONUS`` at the reinforcement cap (kept by count: rank
    asks it of each of a recall's hundred candidates, nearly all with one of a few counts)."""
    return REINFORCEMENT_BONUS * (reinforcement(sessions) - 1.0) / (REINFORCEMENT_CAP - 1.0)


def score(base: float, memory: Memory | Brief, age: float, sessions: int, challenged: bool) -> float:
    """Relevance first; age and use only reorder memories within ``RECENCY_BONUS + REINFORCEMENT_BONUS`` of
    each other (an episode is about a moment: of two equally relevant ones the newer comes first)."""
    return settled(base + recency_bonus(memory, age), sessions, challenged, memory.rank == Rank.PROVISIONAL)


def recency_bonus(memory: Memory | Brief, age: float) -> float:
    return RECENCY_BONUS * age_factor(memory, age)


def settled(value: float, sessions: int, challenged: bool, provisional: bool) -> float:
    """A score from a memory's relevance with its recency bonus (``value``): its use added, or the challenge's
    demotion; then the provisional rank's."""
    if challenged:
        # A memory that misled an agent is demoted; what it was served before is no evidence for it.
        value *= CHALLENGED_FACTOR
    else:
        value += use_bonus(sessions)
    if provisional:
        value *= PROVISIONAL_FACTOR
    return value


class Standing(NamedTuple):
    """What a candidate's score depends on that is known before the query's vector: the full text's
    candidates have theirs made while the query is still being embedded. ``rank`` scores a candidate as
    ``score`` does, from ``relevance`` and these."""

    brief: Brief
    text_score: float  # the share of the query's word weight its text holds
    question: bool  # it asks (``asks``)
    recency: float  # its ``recency_bonus``
    provisional: bool


def standing(brief: Brief, text_score: float, now: datetime) -> Standing:
    return Standing(
        brief,
        text_score,
        asks(brief),
        recency_bonus(brief, age_days(brief.created_at, now)),
        brief.rank == Rank.PROVISIONAL,
    )


class Candidate(NamedTuple):
    """A memory recall may return, with everything its rank depends on."""

    standing: Standing
    similarity: float  # to the query vector; 0 for a memory without one
    sessions: int  # agent sessions recall served it to within the reinforcement window
    challenged: bool  # an open dispute says it misled an agent


def rank(candidates: Iterable[Candidate], limit: int) -> list[tuple[float, Brief]]:
    """The ``limit`` best candidates with their scores, best first; equal scores in id order."""
    scored = [
        (
            settled(relevance(similarity, s.text_score, s.question) + s.recency, sessions, challenged, s.provisional),
            s.brief,
        )
        for s, similarity, sessions, challenged in candidates
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    return scored[:limit]


class _TextSide(NamedTuple):
    """What recall takes from full text: the query's plan, and its candidates (those the reader may see)
    with their standings, and the vectors of those that have one (``ids``, rows of ``vectors``)."""

    plan: TextPlan
    standings: dict[str, Standing]
    ids: list[str]
    vectors: np.ndarray | None

    def similarities(self, vector: np.ndarray) -> dict[str, float]:
        """The similarities to the query vector of the candidates with a vector: each row's dot product as
        ``row @ vector`` makes it (``vecdot``; one matrix product rounds a row by where it sits)."""
        if self.vectors is None:
            return {}
        return dict(zip(self.ids, np.vecdot(self.vectors, vector).tolist(), strict=True))


class _QueryVector:
    """The query's vector, when the search asks for it; a context whose end takes a vector asked for and never
    used (the recall failed before), so the process embedding it is free for the next.

    On a store whose reads hold the GIL (SQLite) the query goes to the app's query process as the recall
    starts (``embedding/query_process.py``) and the reads that need no vector go on meanwhile; without one
    (not a server, not ready, busy with another recall's query, or other calls in flight) it is embedded
    here before the transaction:
    on a thread the model's many small numpy steps each wait for the GIL back behind the reads (measured:
    4 ms an embedding beside the search, 1.5 ms alone). On a store whose reads wait on a server (PostgreSQL)
    it is embedded on a thread of the app's from ``start`` on, which the full text calls as it reads its
    candidates: the two longest waits of the reads that need no vector (the words' postings and the rows,
    ~1.7 ms each in the server at 100,000 memories), the GIL free meanwhile. Started with the transaction,
    the embedding held the GIL when each short read before them came back, and they waited for it
    (measured at 100,000 memories, 300 queries each run one after the other in one process, load 1.5-2:
    the median recall 2.0 to 2.5 ms faster than embedding first when started here, 0.8 to 1.1 ms when
    started with the transaction, 1.5 ms when embedded on this thread while the server reads the
    postings)."""

    def __init__(self, app: App, query: str) -> None:
        self._app, self._query = app, query
        self.dim = app.embedder.dim
        self._vector: np.ndarray | None = None
        self._embedding: Future[np.ndarray] | None = None
        self._asked: Asked | None = None
        self._text_pending = False  # the full text is still to be read (``text_pending``)
        if not app.store.reads_in_server:
            # Alone: with other calls in flight the cores are busy with them, and there is no idle core for
            # the process to use, only the hand-off to pay. (Eight HTTP clients on two workers: the same
            # calls/s with the process and without; every recall asking it was not measured apart from the
            # processes' start, docs/benchmarks-archive.md.)
            process = app.query_process if app.calls_in_flight <= 1 else None
            self._asked = None if process is None else process.ask(query)
            if self._asked is None:
                self._vector = self._embed()

    def __enter__(self) -> _QueryVector:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._asked is not None:
            self._asked.forget()

    def _embed(self) -> np.ndarray:
        return embed_queries(self._app.embedder, [self._query])[0]

    def text_pending(self, pending: bool) -> None:
        """Whether the full text's side of the recall is still to be read (perhaps on another thread): whoever
        takes the vector from the query process meanwhile does not spin for it."""
        self._text_pending = pending

    def start(self) -> None:
        """Embed the query on another thread, unless it is embedded or being embedded already."""
        if self._vector is None and self._embedding is None and self._asked is None:
            self._embedding = self._app.alongside(self._embed)

    def __call__(self) -> np.ndarray:
        if self._vector is None and self._asked is not None:
            # Asked until the vector is here: ``start`` (the full text, on another thread) embeds nothing.
            # Spinning for it only while no other thread reads for this recall (the full text beside a large
            # index's scan): each look takes the interpreter lock from that thread (measured at 30,000
            # memories: 3.43 against 3.30 ms a recall, its word counts read in 0.17 against 0.04 ms).
            taken = self._asked.take(spin=not self._text_pending)
            self._vector = self._embed() if taken is None else taken  # None: the process failed on it, or is gone
            self._asked = None
        if self._vector is None:
            self.start()
            assert self._embedding is not None
            self._vector = self._embedding.result()
        return self._vector


def _text_side(
    tx: Tx, vis: Visibility, query: str, vector: _QueryVector, scopes: Collection[str], pool: int, now: datetime
) -> _TextSide:
    try:
        plan = tx.text_plan(query)
        vector.start()  # while the candidates are read
        # Read with their vectors: those full text alone finds are compared with the query vector too (the
        # ones the vector search also finds are read twice).
        read = tx.text_briefs(plan, scopes=scopes, limit=pool, reader=vis)
        # A memory whose vector another model made (a model of another size, before ``zm db reindex``) is
        # found by its text alone, as one without a vector.
        with_vector = [(i, v) for i, (_, v) in read.items() if v is not None and len(v) == vector.dim]
        return _TextSide(
            plan,
            {i: standing(brief, plan.score(brief.content), now) for i, (brief, _) in read.items()},
            [i for i, _ in with_vector],
            np.stack([v for _, v in with_vector]) if with_vector else None,
        )
    finally:
        vector.text_pending(False)


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
    session_id = session_id or caller.session_id
    with _QueryVector(app, query) as vector, app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(
            tx, vis, session_id, project_hint, auto_create=app.settings.auto_create_projects, at=now, dry=True
        )
        covered = read_set(tx, vis, scopes_arg, hinted, session)
        pool = max(config.recall_candidates, limit * 4)
        candidates, marks = _gather(tx, vis, query, vector, covered, kinds, pool, config.recall_similarity, now)
        ranked = rank(candidates, limit)
        # Freshness only matters for what is returned.
        reaffirmed = freshness.affirmed(tx, [m for _, m in ranked], now)
    if session.pending:
        # The hint names a project still to create or a session still to attach: written once, after the
        # read (a project that does not exist yet holds nothing to recall), and never again in the session.
        settle_hint(
            app.store, caller.uid, session_id, project_hint, auto_create=app.settings.auto_create_projects, at=now
        )
    disputed = {d.memory_a for d in marks.disputes} | {d.memory_b for d in marks.disputes if d.memory_b}
    anchored = marks.anchors
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
            stale_days=freshness.stale_days_of(m, now, reaffirmed.get(m.id)),
            anchors=[a.anchor.label for a in anchored.get(m.id, [])],
            code_changed=code_changed(anchored.get(m.id, [])),
        )
        for value, m in ranked
    ]
    if hits and channel is not None:
        app.telemetry.record(Surfacing(caller.uid, tuple(h.id for h in hits), now, session.session_id, channel))
    return RecallResult(hits=hits, session=session.info)


def _gather(
    tx: Tx,
    vis: Visibility,
    query: str,
    vector: _QueryVector,
    covered: Collection[str],
    kinds: list[Kind] | None,
    pool: int,
    floor: float,
    now: datetime,
) -> tuple[list[Candidate], CandidateMarks]:
    """The candidates from both sides, with their similarity, text score, use and challenges; and what was
    read of them for that (the open disputes about them, and their anchors, for the answer)."""
    search = tx.vector_search(floor=floor, limit=pool, scopes=covered, kinds=kinds or None)
    # The full text is read while the index is searched (on SQLite, beside it on another thread), or on
    # PostgreSQL while the query is embedded; its candidates' standings are made there too.
    vector.text_pending(True)
    neighbours, text = search.run(vector, lambda: _text_side(tx, vis, query, vector, covered, pool, now))
    # Ranked on briefs (no source, no history): recall returns what they hold.
    standings = text.standings
    similarity = text.similarities(vector())
    for n in neighbours:
        if n.brief.scope in vis.readable:
            similarity[n.brief.id] = n.similarity
            if n.brief.id not in standings:
                standings[n.brief.id] = standing(n.brief, text.plan.score(n.brief.content), now)
    kept = [s for s in standings.values() if s.brief.live and (not kinds or s.brief.kind in kinds)]
    # The disputes, the sessions served and the anchors in one call (one round trip on PostgreSQL): the
    # anchors only matter for the few returned, but asked of every candidate they cost no round trip.
    marks = tx.candidate_marks(
        [s.brief.id for s in kept], since=now - timedelta(days=REINFORCEMENT_WINDOW_DAYS), channel=Channel.RECALL
    )
    sessions = marks.sessions
    challenged = {d.memory_a for d in marks.disputes if d.verdict in CHALLENGE_VERDICTS}
    candidates = [
        Candidate(s, similarity.get(s.brief.id, 0.0), sessions.get(s.brief.id, 0), s.brief.id in challenged)
        for s in kept
    ]
    return candidates, marks
