"""Putting data where the dashboard can see it, through the real service paths, and reading it back."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project, grant
from zero_memory.app import App
from zero_memory.conflicts.challenge import challenge
from zero_memory.domain.memory import Kind, Memory
from zero_memory.domain.records import Dispute, Judgement, PortabilityCandidate
from zero_memory.hygiene.apply import Context, raise_dispute
from zero_memory.hygiene.candidates import Candidate
from zero_memory.hygiene.decide import Action, Outcome
from zero_memory.ids import new_id
from zero_memory.memory.lifecycle import forget
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember
from zero_memory.store import SYSTEM

CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def unique(text: str) -> str:
    """A marker that keeps one test's memories apart from every other test's."""
    return f"{text} [t{uuid.uuid4().hex[:8]}]"


def csrf_of(html: str) -> str:
    found = CSRF_RE.search(html)
    assert found, "the page has no CSRF field"
    return found.group(1)


@dataclass
class Seeder:
    """Writes as agents would (``remember``), raises rows as hygiene would (``raise_dispute``)."""

    app: App

    def caller(self, uid: str, client: str = "claude-code") -> Caller:
        return Caller(uid, client=client, session_id=None)

    def memory(
        self,
        uid: str,
        content: str,
        *,
        kind: str = "fact",
        scope: str = "personal",
        client: str = "claude-code",
        provisional: bool = False,
    ) -> str:
        request = RememberRequest(content=content, kind=Kind(kind), scope=scope, provisional=provisional)
        result = remember(self.app, self.caller(uid, client), request)
        assert result.status == "created", result
        return result.id

    def get(self, memory_id: str) -> Memory:
        with self.app.store.tx() as tx:
            found = tx.get_memory(memory_id, SYSTEM)
        assert found is not None
        return found

    def pair(
        self,
        uid: str,
        a_text: str,
        b_text: str,
        *,
        scope: str = "personal",
        kind: str = "fact",
        **judged: Any,
    ) -> tuple[str, str, str]:
        """A pending pair row over two new memories: (dispute id, A's id, B's id)."""
        a = self.memory(uid, a_text, scope=scope, kind=kind)
        b = self.memory(uid, b_text, scope=scope, kind=kind, client="cursor")
        dispute = self.dispute(self.pair_of(uid, a, b, **judged))
        return dispute.id, dispute.memory_a, dispute.memory_b or ""

    def pair_of(
        self,
        uid: str,
        a_id: str,
        b_id: str,
        *,
        verdict: str = "contradiction",
        confidence: float = 0.82,
        rationale: str = "They disagree about the same setting.",
        origin: str = "scan",
        proposed: Outcome | None = None,
    ) -> str:
        """Raise a pending pair row over two stored memories, as a hygiene pass would; its id.

        ``proposed``: the automatic outcome the pass held back (a retro row's proposal)."""
        queued = "supersedes" if verdict in ("a_supersedes_b", "b_supersedes_a") else verdict
        direction = verdict if queued == "supersedes" else None
        now = self.app.clock()
        judgement = None if verdict == "unjudged" else Judgement(verdict, confidence, rationale, "gpt-4.1")
        context = Context(actor="hygiene.scan", origin=origin, run_id=None, at=now, judgement=judgement)
        outcome = Outcome(
            Action.QUEUE,
            8,
            verdict=queued,
            direction=direction,
            contradicts_link=verdict == "contradiction",
            proposed=proposed,
        )
        with self.app.store.tx(write=True) as tx:
            dispute: Dispute = raise_dispute(tx, Candidate.of(self.get(a_id), self.get(b_id), 0.7), outcome, context)
        return dispute.id

    def challenged(self, uid: str, text: str, reason: str = "The port changed last week.") -> tuple[str, str]:
        memory_id = self.memory(uid, text)
        result = challenge(self.app, self.caller(uid), memory_id, reason)
        return result.dispute_id, memory_id

    def invalidated(self, uid: str, text: str) -> str:
        memory_id = self.memory(uid, text)
        forget(self.app, self.caller(uid), memory_id, "no longer true")
        return memory_id

    def project(self, uid: str, slug: str, *, members: tuple[str, ...] = ()) -> str:
        with self.app.store.tx(write=True) as tx:
            scope = create_project(tx, uid, slug).scope
            for member in members:
                grant(tx, uid, scope, member, "writer")
        return scope

    def proposal(
        self,
        uid: str,
        memory_id: str,
        *,
        confidence: float = 0.86,
        rationale: str = "A fact about the tool, true in every repository.",
        age: timedelta = timedelta(0),
    ) -> str:
        memory = self.get(memory_id)
        candidate = PortabilityCandidate(
            id=new_id("prt"),
            memory_id=memory_id,
            owner=uid,
            status="pending",
            original_scope=memory.scope,
            created_at=self.app.clock() - age,
            confidence=confidence,
            rationale=rationale,
            model="gpt-4.1",
        )
        with self.app.store.tx(write=True) as tx:
            assert tx.add_portability(candidate)
        return candidate.id

    def dispute(self, dispute_id: str) -> Dispute:
        with self.app.store.tx() as tx:
            found = tx.get_dispute(dispute_id)
        assert found is not None
        return found
