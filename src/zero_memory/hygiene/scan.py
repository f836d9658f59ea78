"""The pair scan: screen, judge, route and act on candidate pairs.

Every path that judges pairs goes through here — the sweep, the write
trigger, re-examination, the retro pass — so every guard of §1 applies to
all of them. A failed judgement changes nothing and caches nothing: the pair
is tried again on a later run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zero_memory.access.project_identity import project_paths
from zero_memory.app import App
from zero_memory.domain.memory import Rank
from zero_memory.domain.records import Judgement
from zero_memory.domain.verdicts import Verdict
from zero_memory.hygiene import filters
from zero_memory.hygiene.apply import Context, act
from zero_memory.hygiene.candidates import Candidate
from zero_memory.hygiene.decide import Action, Gates, PairFacts, Side, decide
from zero_memory.hygiene.runs import Tally
from zero_memory.judge.base import Judged, JudgeFailure
from zero_memory.judge.owners import judge_for
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.store import SYSTEM, system_tx


@dataclass(frozen=True, slots=True)
class ScanOptions:
    purpose: Purpose = Purpose.SCAN
    origin: str = "scan"
    allow_auto: bool = True
    dry_run: bool = False
    offer: bool = False
    max_new_rows: int | None = None


def gates(app: App) -> Gates:
    config = app.settings.hygiene
    return Gates(config.auto_confidence, config.auto_invalidate_confidence, config.complementary_link_confidence)


def facts(pair: Candidate) -> PairFacts:
    return PairFacts(
        a=Side(pair.a.id, pair.a.kind, int(pair.a.rank), pair.a.created_at, pair.a.restored),
        b=Side(pair.b.id, pair.b.kind, int(pair.b.rank), pair.b.created_at, pair.b.restored),
    )


DRY_RUN_COUNT = {
    Action.NOTHING: None,
    Action.LINK: "linked_complementary",
    Action.INVALIDATE: "auto_resolved",
    Action.QUEUE: "queued",
}


def scan_pairs(
    app: App, owner: str, pairs: Iterable[Candidate], tally: Tally, options: ScanOptions, run_id: str | None
) -> bool:
    """Judge and act on pairs; False when it stopped at ``max_new_rows`` with pairs left unexamined."""
    judge = judge_for(app.judge_factory, owner, run_id)
    offer = options.offer or judge.offer_mode
    actor = f"hygiene.{options.origin}"
    new_rows = 0
    with system_tx(app.store, "hygiene") as tx:
        paths = project_paths(tx, owner)
    for pair in pairs:
        # Checked before a pair, not after the row that reached the cap: a caller learns whether anything
        # was left over, so a subject whose last pair filled the cap counts as done.
        if options.max_new_rows is not None and new_rows >= options.max_new_rows:
            return False
        tally.add("pairs_considered")
        now = app.clock()
        request = PairRequest(
            JudgedMemory.of(pair.a, now),
            JudgedMemory.of(pair.b, now),
            options.purpose,
            provisional=Rank.PROVISIONAL in (pair.a.rank, pair.b.rank),
        )
        model = None if offer else judge.model_for(request)
        with system_tx(app.store, "hygiene") as tx:
            # Screen the pair as it is now: an earlier action of this run may have retired a side.
            current = tx.get_memories([pair.a.id, pair.b.id], SYSTEM)
            if len(current) == 2:
                pair = Candidate(current[pair.a.id], current[pair.b.id], pair.similarity)
                skip = filters.screen(tx, pair, model, paths)
            else:
                skip = filters.Skip.DEAD
        if skip is not None:
            tally.add(skip.value)
            continue
        verdict: Verdict | None = None
        judgement: Judgement | None = None
        if not offer:
            result = judge.ask(request)
            if isinstance(result, JudgeFailure):
                tally.add("failed_judgements")
                tally.notes.append(f"{pair.key}: {result.kind.value}")
                continue
            if isinstance(result, Judged):
                tally.add("judged")
                verdict = result.answer.verdict
                judgement = Judgement(
                    verdict.value, result.answer.confidence, result.answer.rationale, result.usage.model
                )
        outcome = decide(
            facts(pair),
            verdict,
            judgement.confidence if judgement else 0.0,
            gates(app),
            allow_auto=options.allow_auto and not offer,
        )
        if options.dry_run:
            name = DRY_RUN_COUNT[outcome.action]
        else:
            ctx = Context(actor=actor, origin=options.origin, run_id=run_id, at=app.clock(), judgement=judgement)
            with system_tx(app.store, "hygiene", write=True) as tx:
                name = act(tx, pair, outcome, ctx)
            name = None if name == "judged" else name
        if name:
            tally.add(name)
        if name == "queued":
            new_rows += 1
    return True
