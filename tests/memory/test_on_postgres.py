"""The key rules of the write path, recall, lifecycle and visibility, again on PostgreSQL.

The tests are the SQLite ones, imported and collected a second time here:
this module's ``make_app`` builds every app (``app`` included) on a fresh
PostgreSQL database, so the same sentences must hold on the scale-out store.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from tests.hygiene.test_loop_closure import (  # noqa: F401  (collected again, on PostgreSQL)
    test_a_full_cycle_closes_the_loop_links_its_evidence_and_undo_reopens_it,
)
from tests.memory.test_briefing import (  # noqa: F401
    test_a_briefing_has_every_section_in_its_order,
    test_a_topic_briefing_recalls_for_the_topic_and_records_it_as_a_briefing,
    test_only_scopes_the_caller_can_see,
)
from tests.memory.test_lifecycle import (  # noqa: F401  (collected again, on PostgreSQL)
    test_a_shared_project_is_visible_to_members_only_and_readers_cannot_write,
    test_another_users_memory_answers_exactly_like_a_missing_id,
    test_forget_keeps_the_row_and_restore_brings_it_back,
    test_move_reports_moved_unchanged_and_failed_and_keeps_the_original_scope,
)
from tests.memory.test_ranking import (  # noqa: F401
    clock,
    ranked,
    test_a_challenged_memory_is_demoted_and_its_surfacings_no_longer_lift_it,
    test_a_closed_loop_leaves_recall_and_a_reopened_one_comes_back_undecayed,
    test_a_memory_served_in_many_sessions_is_boosted_at_most_by_the_cap,
    test_an_old_episode_that_answers_beats_a_fresh_one_that_shares_a_word,
    test_every_member_s_agent_sessions_reinforce_a_shared_memory_alike_for_each_reader,
    test_many_recalls_in_one_session_count_once,
    test_open_loops_do_not_decay_while_open,
    test_the_dashboard_the_cli_channel_and_benchmarks_never_reinforce,
)
from tests.memory.test_recall import (  # noqa: F401
    test_forgotten_memories_are_not_recalled,
    test_recall_finds_by_meaning_and_by_exact_words,
    test_recall_never_returns_another_users_memory,
)
from tests.memory.test_write import (  # noqa: F401
    test_a_declared_supersede_retires_and_links_atomically_and_restore_undoes_it,
    test_a_hint_creates_a_project_and_attaches_the_session_which_keeps_it,
    test_a_near_paraphrase_with_the_opposite_value_is_written_not_swallowed,
    test_a_new_memory_is_created_with_rank_1_and_an_audit_row,
    test_a_provisional_write_yields_to_an_authoritative_paraphrase,
    test_a_secret_in_any_field_is_rejected_and_never_echoed,
    test_a_supersede_of_another_users_memory_is_skipped_as_missing,
    test_an_identical_rewrite_is_absorbed_into_the_existing_memory,
    test_refinement_never_crosses_sessions,
    test_same_session_refinement_supersedes_the_older_write,
)
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.store import system_tx


@pytest.fixture
def make_app(make_app: Callable[..., App]) -> Callable[..., App]:
    """The shared ``make_app``, on PostgreSQL: ``app`` and every test above use it."""
    return partial(make_app, backend="postgres")


def test_the_apps_here_really_run_on_postgresql(app: App, alice: Caller) -> None:
    from tests.memory.helpers import write

    assert app.store.backend == "postgres"
    written = write(app, alice, "The billing service is written in Rust")
    with system_tx(app.store, "test") as tx:
        assert tx.fulltext("Rust", scopes=[written.scope], limit=5) == [written.id]
