"""``resolve_conflicts`` on a real store: a policy over pair rows, an explicit list whose failures stay its own."""

from __future__ import annotations

from tests.conflicts.test_apply import dispute_row, memory, raise_row
from tests.reliability.consistency import assert_consistent
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.bulk import resolve_conflicts
from zero_memory.conflicts.models import BulkItem, Policy
from zero_memory.domain.records import DisputeStatus
from zero_memory.memory.lifecycle import forget

OTHER = ("Deploys go out on Tuesdays after the standup", "The release train leaves every second Thursday")


def test_a_policy_settles_pair_rows_and_skips_single_rows_and_rows_whose_kept_side_is_gone(
    app: App, alice: Caller
) -> None:
    settled = raise_row(app, alice)
    single = raise_row(app, alice, single=True, texts=OTHER)
    assert settled.b is not None
    result = resolve_conflicts(app, alice, policy=Policy(name="newest_wins"))
    assert (result.resolved, result.skipped, result.failed) == ([settled.dispute.id], [single.dispute.id], [])
    assert memory(app, settled.b).live and not memory(app, settled.a).live
    assert dispute_row(app, single.dispute.id).status is DisputeStatus.PENDING

    # A row whose newer side was forgotten is left for a person: the policy never keeps a memory that is gone.
    gone = raise_row(app, alice, texts=("Builds cache dependencies in a shared volume", "Staging logs stay 14 days"))
    assert gone.b is not None and gone.a not in (single.a, settled.a)
    forget(app, alice, gone.b)
    again = resolve_conflicts(app, alice, policy=Policy(name="newest_wins"))
    assert (again.resolved, again.skipped) == ([], [single.dispute.id, gone.dispute.id])
    assert_consistent(app.store)


def test_an_explicit_list_applies_every_item_it_can_and_reports_the_rest(app: App, alice: Caller) -> None:
    pair = raise_row(app, alice)
    single = raise_row(app, alice, single=True, texts=OTHER)
    assert pair.b is not None
    result = resolve_conflicts(
        app,
        alice,
        resolutions=[
            BulkItem(dispute_id=pair.dispute.id, winner=pair.a, retire=True),
            BulkItem(dispute_id=single.dispute.id, retire=True),
            BulkItem(dispute_id=pair.dispute.id, winner="mem_elsewhere"),
            BulkItem(dispute_id=pair.dispute.id),
        ],
    )
    assert result.resolved == [single.dispute.id, pair.dispute.id]
    assert [(f.dispute_id, f.error) for f in result.failed] == [
        (pair.dispute.id, "validation_failed: pass winner or retire, not both"),
        (pair.dispute.id, "validation_failed: winner: must be one of the dispute's two memories"),
    ]
    assert dispute_row(app, pair.dispute.id).resolution == {"keep_both": True}
    assert not memory(app, single.a).live and memory(app, pair.b).live
    assert_consistent(app.store)
