"""The briefing: one call at the start of a session or task (``build_context``, ``zm context``).

It attaches the session to the project the hint names (as ``recall`` with a
hint does) and returns, within a character budget (held by its text and by
its JSON, which is what Claude Code and Codex hand the model), what an agent
should know before it starts: the standing rules (pinned first, then conventions and
preferences, most used first), every open loop (oldest first), the memories
relevant to the topic (or the project's most used and most recent decisions
and gotchas), and how many review-queue rows wait. It reads only the default
read set: the project, the caller's personal root and core.

What a briefing serves is recorded as surfacings on their own channel,
``briefing``: re-examination counts them as traffic, reinforcement never does
(a memory is not more relevant because it was shown unasked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain.memory import OPEN_LOOP_KINDS, Kind, Memory, age_days
from zero_memory.domain.records import Channel
from zero_memory.memory.briefing_text import BRIEFING_SHARES, TRIAGE_POINTER, cut, fit, item_size, size
from zero_memory.memory.context_models import Briefing, BriefingItem, BriefingSection, PendingReviews
from zero_memory.memory.recall import MAX_LIMIT
from zero_memory.memory.recall import recall as recall_service
from zero_memory.memory.targets import SessionState, hint_pending, read_set, session_state, settle_hint
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.settings import MIN_BRIEFING_CHARS
from zero_memory.store.ports.review import DisputeQuery
from zero_memory.telemetry import Surfacing

RULE_KINDS = (Kind.CONVENTION.value, Kind.PREFERENCE.value)
TOPICLESS_KINDS = (Kind.DECISION.value, Kind.GOTCHA.value)
USAGE_WINDOW_DAYS = 90
POOL = 500


def build_context(
    app: App,
    caller: Caller,
    *,
    topic: str | None = None,
    project_hint: str | None = None,
    session_id: str | None = None,
    limit: int = 10,
    budget: int | None = None,
) -> Briefing:
    """The briefing for this caller and session; ``budget`` defaults to ``ZM_BRIEFING_CHARS``."""
    if topic is not None:
        check_text("topic", topic, max_chars=4_000)
    check_fields({"topic": topic, "project_hint": project_hint, "session_id": session_id})
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.validation(f"limit: must be between 1 and {MAX_LIMIT}")
    budget = budget or app.settings.briefing_chars
    if budget < MIN_BRIEFING_CHARS:
        raise errors.validation(f"budget: at least {MIN_BRIEFING_CHARS} characters")
    now = app.clock()
    session_id = session_id or caller.session_id
    auto_create = app.settings.auto_create_projects
    if project_hint is not None and hint_pending(
        app.store, caller.uid, session_id, project_hint, auto_create=auto_create, at=now
    ):
        # The project created and the session attached first (once a session), so that the briefing reads
        # the project as the hint settles it; every later briefing of the session takes no write lock.
        settle_hint(app.store, caller.uid, session_id, project_hint, auto_create=auto_create, at=now)
    facts = _gather(app, caller, session_id, project_hint, topic=topic, limit=limit, at=now)
    briefing = select(facts, now, topic=topic, limit=limit, budget=budget)
    served = [item.id for name in BRIEFING_SHARES for item in getattr(briefing, name).items]
    if served:
        app.telemetry.record(Surfacing(caller.uid, tuple(served), now, facts.session.session_id, Channel.BRIEFING))
    return briefing


@dataclass(frozen=True, slots=True)
class Facts:
    """What a briefing is chosen from, as read from the store (and from recall, for a topic)."""

    session: SessionState
    project: str | None
    pinned: list[Memory]
    conventions: list[Memory]
    loops: list[Memory]
    decisions: list[Memory]  # the topicless pool: the project's decisions and gotchas, newest first
    relevant: list[Memory] | None  # recall's hits for the topic, best first, the rules and loops left out
    usage: Mapping[str, int]
    pending: int
    drifted: list[Memory]


def _gather(
    app: App,
    caller: Caller,
    session_id: str | None,
    project_hint: str | None,
    *,
    topic: str | None,
    limit: int,
    at: datetime,
) -> Facts:
    """Read what the briefing chooses from, in one read transaction (and one recall when there is a topic)."""
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(
            tx, vis, session_id, project_hint, auto_create=app.settings.auto_create_projects, at=at, dry=True
        )
        covered = read_set(tx, vis, None, hinted, session)
        project = next((s for s in (hinted, session.attached) if s is not None and s in covered), None)
        pinned = tx.pinned_in(covered)
        conventions = tx.live_memories(scopes=covered, kinds=RULE_KINDS, limit=POOL)
        loops = tx.live_memories(scopes=covered, kinds=[k.value for k in OPEN_LOOP_KINDS], limit=POOL)
        decisions = (
            []
            if topic
            else tx.live_memories(
                scopes=[project] if project else covered, kinds=TOPICLESS_KINDS, limit=POOL, newest_first=True
            )
        )
        usage = tx.surfacings_of(
            [m.id for m in (*conventions, *decisions)], since=at - timedelta(days=USAGE_WINDOW_DAYS)
        )
        pending = tx.count_disputes(DisputeQuery(scopes=vis.readable))
        drifted_ids = tx.drifted_in(covered, limit=POOL)
        drifted = [m for m in tx.get_memories(drifted_ids, vis).values() if m.live]
    relevant = None
    if topic:
        shown = {m.id for m in (*pinned, *conventions, *loops)}
        hits = recall_service(
            app, caller, topic, scopes_arg=sorted(covered), limit=min(MAX_LIMIT, limit + len(shown)), channel=None
        ).hits
        found = [h.id for h in hits if h.id not in shown][:limit]
        with app.store.tx() as tx:
            tx.act_as(caller.uid)
            by_id = tx.get_memories(found, vis)
        relevant = [by_id[i] for i in found if i in by_id]
    return Facts(session, project, pinned, conventions, loops, decisions, relevant, usage, pending, drifted)


def select(facts: Facts, now: datetime, *, topic: str | None, limit: int, budget: int) -> Briefing:
    """The briefing chosen from ``facts`` (pure): the rules pinned first then most used, the open loops, the
    relevant memories (recall's for a topic, else the most used and most recent decisions), the memories whose
    code changed, each section cut to its share of ``budget``."""
    usage = facts.usage
    ordered = sorted(facts.conventions, key=lambda m: (-usage.get(m.id, 0), -m.created_at.timestamp(), m.id))
    rules = _unique([*facts.pinned, *ordered])
    shown = {m.id for m in rules} | {m.id for m in facts.loops}
    if facts.relevant is not None:
        relevant = [m for m in facts.relevant if m.id not in shown][:limit]
    else:
        relevant = _used_and_recent([m for m in facts.decisions if m.id not in shown], dict(usage))[:limit]
    pinned_ids = {m.id for m in facts.pinned}
    candidates = {
        "rules": [_item(m, now, pinned=m.id in pinned_ids) for m in rules],
        "open_loops": [_item(m, now, loop=True) for m in facts.loops],
        "memories": [_item(m, now) for m in relevant],
        "code_changed": [_item(m, now) for m in sorted(facts.drifted, key=lambda m: (m.created_at, m.id))],
    }
    fixed = {
        "project": facts.project,
        "topic": topic,
        "pending_reviews": PendingReviews(count=facts.pending, pointer=TRIAGE_POINTER if facts.pending else None),
        "budget_chars": budget,
        "session": facts.session.info,
    }
    return _fitted(candidates, budget, fixed)


def _fitted(candidates: Mapping[str, list[BriefingItem]], budget: int, fixed: Mapping[str, object]) -> Briefing:
    """The briefing with as many leading items of each section (``BRIEFING_SHARES``' names) as fit ``budget``.

    The budget holds for ``size``: the text and the JSON a client hands the model, whichever is longer.
    """
    names = list(BRIEFING_SHARES)

    def assemble(counts: Sequence[int]) -> Briefing:
        sections = {
            name: BriefingSection(items=candidates[name][:n], omitted=len(candidates[name]) - n)
            for name, n in zip(names, counts, strict=True)
        }
        return Briefing.model_validate({**fixed, **sections})

    # The fixed part at its longest: no item shown, every one counted as omitted.
    room = budget - size(assemble([0] * len(names)))
    costs = [[item_size(item) for item in candidates[name]] for name in names]
    counts = fit(costs, room, list(BRIEFING_SHARES.values()))
    briefing = assemble(counts)
    while size(briefing) > budget and any(counts):
        largest = max(range(len(counts)), key=lambda i: counts[i])
        counts[largest] -= 1
        briefing = assemble(counts)
    return briefing


def _item(memory: Memory, now: datetime, *, pinned: bool = False, loop: bool = False) -> BriefingItem:
    content, truncated = cut(memory.content)
    days = round(age_days(memory.created_at, now), 1)
    return BriefingItem(
        id=memory.id,
        kind=memory.kind,
        scope=memory.scope,
        age_days=days,
        content=content,
        truncated=truncated,
        pinned=pinned,
        open_days=days if loop else None,
    )


def _unique(memories: Iterable[Memory]) -> list[Memory]:
    """Each memory once, where it first appears."""
    first: dict[str, Memory] = {}
    for memory in memories:
        first.setdefault(memory.id, memory)
    return list(first.values())


def _used_and_recent(memories: list[Memory], usage: dict[str, int]) -> list[Memory]:
    """Most used and most recent, alternately: the decisions agents keep needing and the news."""
    used = sorted((m for m in memories if usage.get(m.id)), key=lambda m: (-usage[m.id], m.id))
    recent = sorted(memories, key=lambda m: (m.created_at, m.id), reverse=True)
    merged: list[Memory] = []
    for pair in zip(used, recent, strict=False):
        merged.extend(pair)
    merged += used[len(recent) :] + recent[len(used) :]
    return _unique(merged)
