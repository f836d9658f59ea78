"""What a verification of a project's anchors changes on the server.

Verification runs where the code is (``zm verify`` on a developer's machine, workspace/check.py) and reports
one outcome per anchor; this module applies them, each through the pure ``domain.anchors.step_for``:

- unchanged: the anchor is stamped with the commit it was verified at (the next verification diffs from
  there, so it stays cheap);
- moved: the anchor follows the code to its new place, with an audit row that keeps the old place;
- changed or gone: the memory gets one ``outdated`` review-queue row carrying the evidence (the diff of the
  anchored region, the commit range), and the anchor is marked so recall and the briefing flag the memory.
  While that row is open a later verification brings its evidence up to date instead of raising another.

A report about an anchor that changed on the server meanwhile (re-anchored by someone else, removed with its
memory) is skipped: the next verification reads the current state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.projects import resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import from_text, to_text
from zero_memory.domain.anchors import (
    DIFF_LIMIT,
    Action,
    Anchor,
    AnchorRecord,
    AnchorState,
    Changed,
    Gone,
    Moved,
    Origin,
    Outcome,
    Unchanged,
    step_for,
)
from zero_memory.domain.memory import InvalidationReason, Memory, Rank, retirable_by_automation
from zero_memory.domain.records import Dispute, DisputeShape, Run, RunStatus
from zero_memory.ids import new_id
from zero_memory.judge.owners import judge_for
from zero_memory.judge.questions import code_change
from zero_memory.memory import anchoring
from zero_memory.settings import HygieneConfig
from zero_memory.store.base import Tx

OUTDATED = "outdated"
VERIFY_RUN = "verify"  # the kind of run a verification's automatic retirements belong to
VERIFY_RETIRE = "verify.retire"  # their audit action


@dataclass(frozen=True, slots=True)
class Report:
    """One anchor as the verifier found it: the record it was sent, and the outcome."""

    record: AnchorRecord
    outcome: Outcome


class VerifyResult(BaseModel):
    project: str
    target: str
    anchors: int
    stamped: int = 0
    reanchored: int = 0
    raised: int = 0
    updated_rows: int = 0
    judged_still_true: int = 0
    retired: int = 0
    unchanged_rows: int = 0
    skipped: int = 0
    rows: list[str] = []


def apply(
    app: App, caller: Caller, project: str, reports: Sequence[Report], *, target: str, repository: str
) -> VerifyResult:
    """Apply a verification of ``project`` at ``target`` (a commit, or the working tree's name)."""
    now = app.clock()
    result = VerifyResult(project=project, target=target, anchors=len(reports))
    if not reports:
        return result  # a project with no anchors (most, at every session start): no write transaction
    verdicts = _judged(app, caller, reports, now)  # the model is asked before the write lock is taken
    with app.store.tx(write=True) as tx:
        tx.serialize(f"verify:{project}")
        vis = visibility(tx, caller.uid)
        current = tx.anchors_of({r.record.memory_id for r in reports})
        memories = tx.get_memories(list(current), vis)  # once, for every report: the readable ones
        context = _Context(tx, caller, target, repository, now, result, app.settings.hygiene)
        for report in reports:
            stored = _stored(current, report.record)
            memory = memories.get(stored.memory_id) if stored is not None else None
            if stored is None or memory is None:
                result.skipped += 1
                continue
            context.apply_one(memory, stored, report.outcome, verdicts.get(_key(stored)))
        for run in context.runs.values():
            transitions.finish_run(tx, run, RunStatus.COMPLETED, dict(context.summaries[run.id]), at=now)
    return result


def _key(record: AnchorRecord) -> tuple[str, str, str | None]:
    return record.memory_id, record.path, record.symbol


def _judged(app: App, caller: Caller, reports: Sequence[Report], now: datetime) -> dict[Any, Verdict]:
    """The judge's word on each changed anchor it has not yet seen at this code: asked of the memory owner's
    judge, once per memory and region (a changed region already reported keeps its row, unasked)."""
    asked: dict[Any, Verdict] = {}
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        current = tx.anchors_of({r.record.memory_id for r in reports if isinstance(r.outcome, Changed)})
        memories = tx.get_memories(list(current), vis)
    for report in reports:
        stored = _stored(current, report.record)
        outcome = report.outcome
        memory = memories.get(report.record.memory_id)
        if (
            stored is None
            or memory is None
            or not memory.live
            or not isinstance(outcome, Changed)
            or stored.content_hash is None
            or stored.observed_hash == outcome.content_hash
        ):
            continue
        judge = judge_for(app.judge_factory, memory.owner)
        if judge.offer_mode:
            continue
        request = code_change.request_for(memory, stored.anchor.label, outcome.diff, now)
        answer = code_change.ask(judge, request)
        if answer is not None:
            asked[_key(stored)] = Verdict(*answer, model=judge.model_for(request))
    return asked


@dataclass(frozen=True, slots=True)
class Verdict:
    still_true: bool
    confidence: float
    rationale: str
    model: str


def _stored(current: dict[str, list[AnchorRecord]], sent: AnchorRecord) -> AnchorRecord | None:
    for record in current.get(sent.memory_id, []):
        if (record.path, record.symbol) == (sent.path, sent.symbol):
            return record
    return None


@dataclass
class _Context:
    """One verification's write transaction and what it applies each outcome with."""

    tx: Tx
    caller: Caller
    target: str
    repository: str
    now: datetime
    result: VerifyResult
    config: HygieneConfig
    runs: dict[str, Run] = field(default_factory=dict)  # each memory owner's run of this verification
    summaries: dict[str, Counter[str]] = field(default_factory=dict)

    def run_for(self, owner: str, counted: str) -> str:
        """The run an automatic change to ``owner``'s memory belongs to (what ``zm hygiene undo`` reverts)."""
        run = self.runs.get(owner)
        if run is None:
            run = Run.running(new_id("run"), owner=owner, kind=VERIFY_RUN, started_by=self.caller.uid, at=self.now)
            transitions.start_run(self.tx, run, at=self.now)
            self.runs[owner] = run
            self.summaries[run.id] = Counter()
        self.summaries[run.id][counted] += 1
        return run.id

    def apply_one(self, memory: Memory, stored: AnchorRecord, outcome: Outcome, verdict: Verdict | None) -> None:
        step = step_for(stored, outcome)
        if step.action is Action.STAMP:
            self._stamp(stored, outcome)
        elif step.action is Action.REANCHOR and isinstance(outcome, Moved):
            self._follow(memory, stored, outcome, "anchor.move", {})
            self.result.reanchored += 1
        elif step.action is Action.RAISE:
            self._raise(memory, stored, outcome, verdict)

    def _verified(self, stored: AnchorRecord, path: str, symbol: str | None, content_hash: str | None) -> AnchorRecord:
        """The anchor as verified now, at this place and hash: no drift, nothing observed pending."""
        return replace(
            stored,
            path=path,
            symbol=symbol,
            state=AnchorState.VERIFIED,
            repository=self.repository,
            commit=self.target,
            content_hash=content_hash,
            verified_at=self.now,
            drift=None,
            observed=None,
            observed_hash=None,
        )

    def _stamp(self, stored: AnchorRecord, outcome: Outcome) -> None:
        content_hash = outcome.content_hash if isinstance(outcome, Unchanged | Moved) else stored.content_hash
        where = outcome if isinstance(outcome, Moved) else stored  # a first verification takes the code's place
        stamped = self._verified(stored, where.path, where.symbol, content_hash)
        if stamped != stored:
            self.tx.update_anchor(stored, stamped)
            self.result.stamped += 1

    def _follow(
        self, memory: Memory, stored: AnchorRecord, to: Moved | Changed, action: str, why: dict[str, object]
    ) -> None:
        """The anchor follows the code to its place now, with an audit row that keeps where it was."""
        moved = self._verified(stored, to.path, to.symbol, to.content_hash)
        transitions.follow_anchor(
            self.tx,
            stored,
            moved,
            owner=memory.owner,
            actor=self.caller.uid,
            action=action,
            at=self.now,
            payload={**anchoring.moved_payload(stored, moved), "new_commit": self.target, **why},
            run_id=self.run_for(memory.owner, "reanchored"),
        )

    def _raise(self, memory: Memory, stored: AnchorRecord, outcome: Outcome, verdict: Verdict | None) -> None:
        tx, now, result = self.tx, self.now, self.result
        if not memory.live:
            result.skipped += 1
            return
        judged = _judgement(verdict)
        changed = outcome if isinstance(outcome, Changed) else None  # else Gone: step_for raises for no other
        open_rows = tx.open_disputes_for([memory.id])
        if verdict is not None and changed is not None:
            if verdict.still_true and verdict.confidence >= self.config.auto_confidence:
                # The judge is sure the memory still holds: it follows the code, no row.
                self._follow(memory, stored, changed, "anchor.accept", judged)
                result.judged_still_true += 1
                return
            if (
                not verdict.still_true
                and verdict.confidence >= self.config.auto_invalidate_confidence
                and memory.rank == Rank.PROVISIONAL
                and retirable_by_automation(memory.restored, bool(open_rows))
            ):
                self._retire(memory, stored, judged)
                return
        drift = f"{(stored.commit or '?')[:12]}..{self.target[:12]}"
        evidence = _evidence(stored, outcome, drift)
        marked = replace(
            stored,
            state=AnchorState.CHANGED if changed else AnchorState.GONE,
            drift=drift,
            observed=Anchor(changed.path, changed.symbol) if changed else None,
            observed_hash=changed.content_hash if changed else None,
        )
        if marked != stored:
            tx.update_anchor(stored, marked)
        open_row = next((d for d in open_rows if d.shape is DisputeShape.SINGLE and d.verdict == OUTDATED), None)
        if open_row is not None:
            if open_row.reason != evidence and tx.update_outdated(open_row.id, evidence):
                result.updated_rows += 1
            else:
                result.unchanged_rows += 1
            return
        dispute = Dispute.single(
            new_id("dsp"),
            owner=memory.owner,
            verdict=OUTDATED,
            origin="verify",
            memory_id=memory.id,
            at=now,
            reason=evidence,
            confidence=verdict.confidence if verdict else None,
            rationale=verdict.rationale if verdict else None,
            model=verdict.model if verdict else None,
        )
        transitions.raise_dispute(
            tx, dispute, actor=self.caller.uid, at=now, payload={"anchor": stored.anchor.label, "commits": drift}
        )
        result.raised += 1
        result.rows.append(dispute.id)

    def _retire(self, memory: Memory, stored: AnchorRecord, judged: dict[str, object]) -> None:
        """A provisional memory the judge is sure the change made untrue: retired in a run, undoable."""
        run_id = self.run_for(memory.owner, "auto_resolved")
        transitions.retire(
            self.tx,
            memory,
            successor=None,
            reason=InvalidationReason.RETIRED,
            actor=self.caller.uid,
            action=VERIFY_RETIRE,
            at=self.now,
            payload={"anchor": stored.anchor.label, "commit": self.target, **judged},
            run_id=run_id,
        )
        self.result.retired += 1


def _judgement(verdict: Verdict | None) -> dict[str, object]:
    if verdict is None:
        return {}
    return {
        "verdict": "still_true" if verdict.still_true else "no_longer_true",
        "confidence": verdict.confidence,
        "rationale": verdict.rationale,
        "model": verdict.model,
    }


def _evidence(stored: AnchorRecord, outcome: Outcome, drift: str) -> str:
    if isinstance(outcome, Gone):
        return f"The code this memory describes is gone: {stored.anchor.label} ({outcome.reason}, commits {drift})."
    assert isinstance(outcome, Changed)
    place = stored.anchor.label
    now_at = f"{outcome.path}::{outcome.symbol}" if outcome.symbol else outcome.path
    moved = f" (now at {now_at})" if now_at != place else ""
    return f"The code this memory describes changed: {place}{moved}, commits {drift}.\n{outcome.diff}"


def project_for(app: App, caller: Caller, hint: str) -> str:
    """The caller's project a repository names (its path or remote), never created here."""
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        return resolve_hint(tx, vis, hint, auto_create=False, dry=True).scope


def anchors_of_project(app: App, caller: Caller, project: str) -> list[AnchorRecord]:
    """Every anchor of the project's live memories the caller can read."""
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        if not vis.can_read(project):
            raise errors.not_found(f"project {project}")
        return tx.anchors_in([project])


# On the wire (zm verify talking to a zm serve over HTTP): plain JSON objects.


def record_json(record: AnchorRecord) -> dict[str, Any]:
    return {
        "memory_id": record.memory_id,
        "path": record.path,
        "symbol": record.symbol,
        "origin": record.origin.value,
        "state": record.state.value,
        "repository": record.repository,
        "commit": record.commit,
        "content_hash": record.content_hash,
        "verified_at": to_text(record.verified_at) if record.verified_at else None,
        "drift": record.drift,
        "observed": {"path": record.observed.path, "symbol": record.observed.symbol} if record.observed else None,
        "observed_hash": record.observed_hash,
    }


def record_from_json(data: Mapping[str, Any]) -> AnchorRecord:
    try:
        return AnchorRecord(
            memory_id=str(data["memory_id"]),
            path=str(data["path"]),
            symbol=data.get("symbol") or None,
            origin=Origin(data["origin"]),
            state=AnchorState(data["state"]),
            repository=data.get("repository"),
            commit=data.get("commit"),
            content_hash=data.get("content_hash"),
            verified_at=from_text(data["verified_at"]) if data.get("verified_at") else None,
            drift=data.get("drift"),
            observed=Anchor(str(seen["path"]), seen.get("symbol") or None) if (seen := data.get("observed")) else None,
            observed_hash=data.get("observed_hash"),
        )
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        raise errors.validation(f"anchor: {error}") from error


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    return {"outcome": type(outcome).__name__.lower(), **asdict(outcome)}


OUTCOMES: dict[str, type[Unchanged | Moved | Changed | Gone]] = {
    "unchanged": Unchanged,
    "moved": Moved,
    "changed": Changed,
    "gone": Gone,
}


def outcome_from_json(data: Mapping[str, Any]) -> Outcome:
    kind = OUTCOMES.get(str(data.get("outcome")))
    if kind is None:
        raise errors.validation(f"outcome: one of {', '.join(OUTCOMES)}")
    fields: dict[str, Any] = {name: data.get(name) for name in kind.__dataclass_fields__}
    if any(not isinstance(value, str) for name, value in fields.items() if name != "symbol" or value is not None):
        raise errors.validation("outcome: every field is a string (symbol may be null)")
    if isinstance(fields.get("diff"), str) and len(fields["diff"]) > DIFF_LIMIT:
        raise errors.validation(f"outcome: a diff of at most {DIFF_LIMIT} characters")
    try:
        return kind(**fields)
    except TypeError as error:
        raise errors.validation(f"outcome: {error}") from error
