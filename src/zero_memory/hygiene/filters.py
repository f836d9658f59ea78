"""Pre-judge filters (docs/spec/hygiene.md §1): each drops a pair before any judge call, at no cost.

In order: a side is not live or the owners differ; the pair already has a
review-queue row in any status (a settled pair stays settled); a
``supersedes`` link already joins them; the current model already judged
them (in offer mode, with no model: some judge found them unrelated or
complementary); they belong to different projects.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from zero_memory.access.project_identity import different_projects
from zero_memory.domain.verdicts import Verdict
from zero_memory.hygiene.candidates import Candidate
from zero_memory.store.base import Tx

NOT_A_CONFLICT = (Verdict.UNRELATED.value, Verdict.COMPLEMENTARY.value)


class Skip(StrEnum):
    """Why a pair was not judged; the run summary counts each."""

    DEAD = "skipped_dead"
    SETTLED = "skipped_settled"
    DECLARED = "skipped_declared"
    CACHED = "skipped_cached"
    CROSS_PROJECT = "skipped_cross_project"


def dead_or_foreign(pair: Candidate) -> bool:
    return not (pair.a.live and pair.b.live) or pair.a.owner != pair.b.owner


def settled(tx: Tx, pair: Candidate) -> bool:
    return tx.dispute_for_pair(pair.key) is not None


def declared(tx: Tx, pair: Candidate) -> bool:
    return tx.has_link(pair.a.id, pair.b.id, "supersedes")


def cached(tx: Tx, pair: Candidate, model: str | None) -> bool:
    """The judge about to be asked already judged the pair; in offer mode (no model), any judge called
    it unrelated or complementary, so there is nothing to park."""
    if model is not None:
        return tx.get_judgement(pair.key, model) is not None
    return any(j.verdict in NOT_A_CONFLICT for j in tx.judgements_of(pair.key))


def cross_project(pair: Candidate, project_paths: Mapping[str, str]) -> bool:
    return different_projects(pair.a, pair.b, project_paths)


def screen(tx: Tx, pair: Candidate, model: str | None, project_paths: Mapping[str, str]) -> Skip | None:
    """The first filter that drops the pair, or None when it goes to the judge.

    ``model`` is None in offer mode: only what some judge found no conflict is skipped as cached.
    """
    if dead_or_foreign(pair):
        return Skip.DEAD
    if settled(tx, pair):
        return Skip.SETTLED
    if declared(tx, pair):
        return Skip.DECLARED
    if cached(tx, pair, model):
        return Skip.CACHED
    if cross_project(pair, project_paths):
        return Skip.CROSS_PROJECT
    return None
