"""The write path: ``remember``.

In order: validation; the content guard on every text field (before anything
is embedded or stored); the write target; the portability gate; the text's
embedding (skipped for a repeat, below); then, under the write lock, the
provisional yield probe, same-scope dedup absorption,
declared supersedes, same-session refinement (queued instead when the older
side was once restored or has a pending row; a retirement is recorded in a
run of kind ``refine``, like every automatic one) and the ``similar_existing``
list. The probe, dedup, refinement and the list are answered by one search of
the writer's nearest memories (memory/nearby.py).
Every write and every state change writes its audit row.

A text the caller already has live in the target scope is absorbed by its
hash, before any vector is compared: the plan's read looks for it, and when
it is there the model does not run (its pass was 45–50 % of a remember's
CPU under eight clients' load; agents repeat what they know). The write lock's own look-up still
decides; should the twin be gone by then, the vector is made under the lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

import numpy as np

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.project_identity import different_projects, project_paths
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain import scopes
from zero_memory.domain.anchors import AnchorRecord
from zero_memory.domain.memory import (
    MAX_DECLARED_SUPERSEDES,
    AuthorKind,
    InvalidationReason,
    Kind,
    Memory,
    Rank,
    content_hash,
)
from zero_memory.domain.records import Visibility
from zero_memory.ids import memory_id
from zero_memory.judge.owners import judge_for
from zero_memory.judge.questions.portability import gate_check
from zero_memory.memory import anchoring, gate
from zero_memory.memory.models import (
    LinkSpec,
    RememberRequest,
    RememberResult,
    SimilarMemory,
    SkippedLink,
    WriteStatus,
)
from zero_memory.memory.nearby import Neighbourhood, Question
from zero_memory.memory.refine import REFINE_COUNT, refine_same_session
from zero_memory.memory.targets import session_state, write_target
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.memory.views import similar_view
from zero_memory.settings import HygieneConfig
from zero_memory.store.base import Tx
from zero_memory.store.ports.search import Neighbour
from zero_memory.workspace.mentions import names_code

MAX_LINKS = 50
# The provisional yield probe looks at this many of the writer's memories above its floor.
YIELD_COUNT = 10


@dataclass
class _Plan:
    """What a write was checked to be, before it takes the write lock."""

    scope: str
    routed: dict[str, str] | None = None
    source: dict[str, str] = field(default_factory=dict)
    # The caller already has this text live in ``scope``: a repeat, absorbed by its hash without a vector.
    repeat: bool = False


def _text_fields(req: RememberRequest, source: dict[str, str]) -> dict[str, str | None]:
    fields: dict[str, str | None] = {
        "content": req.content,
        "scope": req.scope,
        "project_hint": req.project_hint,
        "session_id": req.session_id,
    }
    fields.update({f"source.{name}": value for name, value in source.items()})
    fields.update({f"links[{i}].dst": link.dst for i, link in enumerate(req.links)})
    return fields


def _validate(req: RememberRequest) -> None:
    check_text("content", req.content)
    declared = [link for link in req.links if link.type == "supersedes"]
    if len(declared) > MAX_DECLARED_SUPERSEDES:
        raise errors.validation(
            f"links: {len(declared)} declared supersedes; at most {MAX_DECLARED_SUPERSEDES} per write"
        )
    if len(req.links) > MAX_LINKS:
        raise errors.validation(f"links: at most {MAX_LINKS} links per write")
    if req.provisional and declared:
        raise errors.validation("links: a provisional write cannot declare supersedes")


def _source(req: RememberRequest, caller: Caller) -> dict[str, str]:
    source = req.source.model_dump(exclude_none=True) if req.source else {}
    session_id = req.session_id or caller.session_id
    if session_id and "client_session_id" not in source:
        source["client_session_id"] = session_id
    if caller.client and "client" not in source:
        source["client"] = caller.client
    return source


def _plan(app: App, caller: Caller, req: RememberRequest, source: dict[str, str]) -> _Plan:
    """Resolve where the write goes without changing anything, and run the portability gate."""
    now = app.clock()
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(
            tx,
            vis,
            req.session_id or caller.session_id,
            req.project_hint,
            auto_create=app.settings.auto_create_projects,
            at=now,
            dry=True,
        )
        target = write_target(tx, vis, req.scope, hinted, session)
        _check_link_targets(tx, vis, req.links)
        # A provisional write compares vectors before hashes (the yield probe): it always needs its vector.
        repeat = not req.provisional and tx.find_live_by_hash(caller.uid, target, content_hash(req.content)) is not None
    project = hinted or session.attached
    wants_core = target == scopes.core(caller.uid)
    wants_personal = target == scopes.personal(caller.uid)
    if project is None or not (wants_core or wants_personal):
        return _Plan(target, source=source, repeat=repeat)
    decision = gate.decide(
        req.kind,
        wants_core,
        req.content,
        gate_check(judge_for(app.judge_factory, caller.uid)),
        app.settings.hygiene.portable_min_confidence,
    )
    if decision.granted:
        return _Plan(target, source=source, repeat=repeat)
    return _Plan(project, routed={"project": project, "reason": decision.reason}, source=source)


def _anchors(app: App, caller: Caller, scope: str, req: RememberRequest) -> list[AnchorRecord]:
    """The memory's anchors: those named, and those its words name where the project's tree is in sight."""
    named = anchoring.named(req.anchors)
    if not named and not names_code(req.content):
        return []  # most memories name no code: no project look-up, no git process
    with app.store.tx() as tx:
        visibility(tx, caller.uid)
        repository = anchoring.repository_of(tx, scope, named, req.project_hint or caller.workspace)
    return anchoring.locate(repository, named, req.content, app.clock())


def _check_link_targets(tx: Tx, vis: Visibility, links: list[LinkSpec]) -> None:
    """A declared supersede of a memory the caller can read but not write fails the whole write.

    A target the caller cannot see is not checked here: it is skipped as ``missing``
    like an id that exists nowhere, so no answer tells a caller another user's id exists.
    """
    for link in links:
        if link.type != "supersedes":
            continue
        target = tx.get_memory(link.dst, vis)
        if target is not None and not vis.can_write(target.scope):
            raise errors.validation(f"links: {link.dst} is in {target.scope}, which is read-only for you")


def remember(app: App, caller: Caller, req: RememberRequest) -> RememberResult:
    _validate(req)
    source = _source(req, caller)
    check_fields(_text_fields(req, source))
    plan = _plan(app, caller, req, source)
    located = _anchors(app, caller, plan.scope, req)
    vector = _embedding(app, req.content)
    if not plan.repeat:
        vector()  # made before the write lock, which waits for no model pass
    config = app.settings.hygiene
    now = app.clock()
    rank = Rank.PROVISIONAL if req.provisional else Rank.AGENT
    with app.store.tx(write=True) as tx:
        tx.serialize(f"remember:{caller.uid}")
        vis = visibility(tx, caller.uid)
        session, hinted = session_state(
            tx,
            vis,
            req.session_id or caller.session_id,
            req.project_hint,
            auto_create=app.settings.auto_create_projects,
            at=now,
        )
        scope = plan.scope if plan.routed else write_target(tx, vis, req.scope, hinted, session)
        _check_link_targets(tx, vis, req.links)
        incoming = Memory(
            id=memory_id(),
            owner=caller.uid,
            scope=scope,
            kind=req.kind,
            content=req.content,
            content_hash=content_hash(req.content),
            author_kind=AuthorKind(caller.author_kind),
            agent_name=caller.client,
            rank=rank,
            source=plan.source,
            created_at=now,
            updated_at=now,
        )

        declared_any = any(link.type == "supersedes" for link in req.links)
        near = _neighbourhood(tx, incoming, vector, config, advice=not declared_any)
        existing = _yield_or_absorb(tx, incoming, near, config.provisional_yield_similarity, config.dedup_similarity)
        if existing is not None:
            status, kept = existing
            transitions.remember_existing(
                tx,
                kept,
                status,
                actor=caller.uid,
                at=now,
                payload={"scope": scope, "kind": req.kind.value, "rank": int(rank)},
            )
            superseded, skipped = _declared_links(tx, vis, caller, kept, req.links, now)
            return RememberResult(
                id=kept.id,
                status=status,
                scope=kept.scope,
                rank=int(kept.rank),
                superseded=superseded,
                skipped_links=skipped,
                session=session.info,
            )

        transitions.create(
            tx,
            incoming,
            vector(),
            app.embedder.model_id,
            actor=caller.uid,
            action="remember",
            at=now,
            payload={
                "scope": scope,
                "kind": req.kind.value,
                "rank": int(rank),
                "client": caller.client,
                "routed_to_project": plan.routed,
                "declared": [link.dst for link in req.links],
                "anchors": [f"{r.origin.value}:{r.anchor.label}" for r in located],
            },
        )
        if located:
            tx.set_anchors(incoming.id, located, now)
        superseded, skipped = _declared_links(tx, vis, caller, incoming, req.links, now)
        similar: list[SimilarMemory] = []
        if not declared_any:
            # The cross-project predicate sees exactly what the sweep sees.
            paths = project_paths(tx, caller.uid)
            superseded += refine_same_session(tx, caller, incoming, near, config.same_session_similarity, now, paths)
            # Advice, not a decision: from the search the write made already (nearby.py).
            similar = _similar_existing(
                vis,
                incoming,
                near.ask(
                    Question(
                        config.similar_existing_similarity,
                        config.similar_existing_limit + 10,
                        exclude=frozenset({incoming.id, *superseded}),
                    )
                ),
                config.similar_existing_limit,
                now,
                paths,
            )
    for callback in app.after_write:
        callback(incoming)
    return RememberResult(
        id=incoming.id,
        status="created",
        scope=scope,
        rank=int(rank),
        superseded=superseded,
        skipped_links=skipped,
        similar_existing=similar,
        hint=_hint(similar),
        routed_to_project=plan.routed,
        length_directive=_length_directive(req.content, config.length_directive_chars),
        anchors=[anchoring.view(record) for record in located],
        session=session.info,
    )


def _embedding(app: App, text: str) -> Callable[[], np.ndarray]:
    """The text's vector, made on first use and then kept."""
    return cache(lambda: app.embedder.embed([text])[0])


def _neighbourhood(
    tx: Tx, incoming: Memory, vector: Callable[[], np.ndarray], config: HygieneConfig, *, advice: bool
) -> Neighbourhood:
    """The writer's memories nearest the text, searched once down to the lowest floor the write will ask."""
    floors = [config.dedup_similarity, config.same_session_similarity]
    count = REFINE_COUNT
    if incoming.rank == Rank.PROVISIONAL:
        floors.append(config.provisional_yield_similarity)
        count = max(count, YIELD_COUNT)
    if advice:
        floors.append(config.similar_existing_similarity)
        count = max(count, config.similar_existing_limit + 10)
    return Neighbourhood(tx, vector, incoming.owner, min(floors), count)


def _yield_or_absorb(
    tx: Tx, incoming: Memory, near: Neighbourhood, yield_floor: float, dedup_floor: float
) -> tuple[WriteStatus, Memory] | None:
    """The authority cascade: ``("yielded" | "absorbed", existing)`` or None to write."""
    if incoming.rank == Rank.PROVISIONAL:
        for neighbour in near.ask(Question(yield_floor, YIELD_COUNT)):
            if neighbour.memory.rank >= Rank.AGENT:
                return "yielded", neighbour.memory
    identical = tx.find_live_by_hash(incoming.owner, incoming.scope, incoming.content_hash)
    if identical is not None:
        return "absorbed", identical
    for neighbour in near.ask(Question(dedup_floor, 1, scope=incoming.scope)):
        # Nearly identical is not identical: "X is blue" after "X is green" is written and judged.
        if incoming.rank < neighbour.memory.rank:
            return "absorbed", neighbour.memory
    return None


def _declared_links(
    tx: Tx, vis: Visibility, caller: Caller, new: Memory, links: list[LinkSpec], now: datetime
) -> tuple[list[str], list[SkippedLink]]:
    superseded: list[str] = []
    skipped: list[SkippedLink] = []
    for link in links:
        target = tx.get_memory(link.dst, vis)
        if link.dst == new.id:
            skipped.append(SkippedLink(dst=link.dst, type=link.type, reason="self"))
            continue
        if target is None:
            skipped.append(SkippedLink(dst=link.dst, type=link.type, reason="missing"))
            continue
        if link.type == "supersedes":
            if not target.live:
                skipped.append(SkippedLink(dst=link.dst, type=link.type, reason="not_live"))
                continue
            transitions.retire(
                tx,
                target,
                successor=new.id,
                reason=InvalidationReason.SUPERSEDED,
                actor=caller.uid,
                action="supersede",
                at=now,
                payload={"declared": True, "loop_closed": target.open_loop},
            )
            superseded.append(target.id)
        else:
            transitions.link(tx, new, target, link.type, actor=caller.uid, at=now)
    return superseded, skipped


def _similar_existing(
    vis: Visibility,
    new: Memory,
    neighbours: list[Neighbour],
    limit: int,
    now: datetime,
    paths: dict[str, str],
) -> list[SimilarMemory]:
    kept = [n for n in neighbours if vis.can_read(n.memory.scope) and not different_projects(n.memory, new, paths)]
    return [similar_view(n.memory, n.similarity, now) for n in kept[:limit]]


def _hint(similar: list[SimilarMemory]) -> str | None:
    if not similar:
        return None
    count = "1 similar memory already exists" if len(similar) == 1 else f"{len(similar)} similar memories already exist"
    return (
        f"{count}. If this one replaces one of them, retire the old one with forget(id) now and, next time you "
        'update a memory, declare it: links: [{"type": "supersedes", "dst": "<old id>"}]. If they are different '
        "facets, nothing to do."
    )


def _length_directive(content: str, limit: int) -> str | None:
    if len(content) <= limit:
        return None
    return (
        f"This memory is {len(content)} characters long. Memories work best as one self-contained statement "
        f"(under {limit} characters): split it into atomic memories, one fact, decision or gotcha each."
    )


__all__ = ["Kind", "remember"]
