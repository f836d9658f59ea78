"""The pre-judge filters (docs/spec/hygiene.md §1), each on its own, then ``screen``'s order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.hygiene.helpers import T0, memory, row
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.access.project_identity import different_projects, project_identity, project_paths
from zero_memory.access.projects import create_project
from zero_memory.app import App
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Judgement, Link
from zero_memory.hygiene import filters
from zero_memory.hygiene.candidates import Candidate
from zero_memory.hygiene.filters import Skip, screen
from zero_memory.store.base import Tx


def stored_pair(app: App, caller: Caller, **fields: Any) -> Candidate:
    old = write(app, caller, "The staging database is green", **fields)
    new = write(app, caller, "The staging database is blue", **fields)
    return Candidate.of(row(app, old.id), row(app, new.id), 0.76)


def raise_row(tx: Tx, pair: Candidate, status: DisputeStatus = DisputeStatus.PENDING) -> None:
    tx.add_dispute(
        Dispute(
            id=f"dsp_{pair.a.id}",
            owner=pair.a.owner,
            shape=DisputeShape.PAIR,
            verdict="contradiction",
            origin="scan",
            status=DisputeStatus.PENDING,
            memory_a=pair.a.id,
            memory_b=pair.b.id,
            pair_key=pair.key,
            created_at=T0,
        )
    )
    if status is not DisputeStatus.PENDING:
        assert tx.settle_dispute(f"dsp_{pair.a.id}", status, {"keep_both": True}, "alice", T0)


# -- 1. dead or foreign ------------------------------------------------------------------


def test_a_pair_with_a_side_that_is_not_live_is_dropped() -> None:
    assert filters.dead_or_foreign(Candidate.of(memory("m1"), memory("m2", live=False), 0.9))
    assert filters.dead_or_foreign(Candidate.of(memory("m1", live=False), memory("m2"), 0.9))


def test_a_pair_of_two_owners_is_dropped() -> None:
    assert filters.dead_or_foreign(Candidate.of(memory("m1"), memory("m2", owner="bob"), 0.9))


def test_a_live_pair_of_one_owner_passes_the_first_filter() -> None:
    assert not filters.dead_or_foreign(Candidate.of(memory("m1"), memory("m2"), 0.9))


# -- 2. a review-queue row in any status ---------------------------------------------------


@pytest.mark.parametrize("status", list(DisputeStatus))
def test_a_pair_with_a_queue_row_in_any_status_is_settled(app: App, alice: Caller, status: DisputeStatus) -> None:
    pair = stored_pair(app, alice)
    with app.store.tx(write=True) as tx:
        assert not filters.settled(tx, pair)
        raise_row(tx, pair, status)
    with app.store.tx() as tx:
        assert filters.settled(tx, pair)
        assert screen(tx, pair, "m", {}) is Skip.SETTLED


# -- 3. a declared supersede ---------------------------------------------------------------


def test_a_supersedes_link_in_either_direction_means_a_declared_update(app: App, alice: Caller) -> None:
    pair = stored_pair(app, alice)
    with app.store.tx(write=True) as tx:
        assert not filters.declared(tx, pair)
        tx.add_link(Link("lnk_1", pair.a.id, pair.b.id, "supersedes", T0, "alice"))
        assert filters.declared(tx, pair)


def test_other_links_are_not_a_declared_update(app: App, alice: Caller) -> None:
    pair = stored_pair(app, alice)
    with app.store.tx(write=True) as tx:
        tx.add_link(Link("lnk_1", pair.b.id, pair.a.id, "relates_to", T0, "alice"))
        tx.add_link(Link("lnk_2", pair.b.id, pair.a.id, "contradicts", T0, "alice"))
        assert not filters.declared(tx, pair)


# -- 4. the judgement cache ----------------------------------------------------------------


def test_a_cached_judgement_counts_for_the_same_model_only(app: App, alice: Caller) -> None:
    pair = stored_pair(app, alice)
    with app.store.tx(write=True) as tx:
        tx.put_judgement(pair.key, Judgement("unrelated", 0.99, "different subjects", "judge-v1"), T0)
    with app.store.tx() as tx:
        assert filters.cached(tx, pair, "judge-v1")
        assert not filters.cached(tx, pair, "judge-v2")
        assert screen(tx, pair, "judge-v1", {}) is Skip.CACHED
        assert screen(tx, pair, "judge-v2", {}) is None


@pytest.mark.parametrize(
    ("verdict", "skipped"),
    [("unrelated", True), ("complementary", True), ("duplicate", False), ("contradiction", False)],
)
def test_offer_mode_skips_a_pair_some_judge_found_no_conflict(
    app: App, alice: Caller, verdict: str, skipped: bool
) -> None:
    """With no model to key the cache, any judge's unrelated or complementary is enough not to park the pair."""
    pair = stored_pair(app, alice)
    with app.store.tx() as tx:
        assert screen(tx, pair, None, {}) is None
    with app.store.tx(write=True) as tx:
        tx.put_judgement(pair.key, Judgement(verdict, 0.99, "the judge's reading", "judge-v1"), T0)
    with app.store.tx() as tx:
        assert screen(tx, pair, None, {}) is (Skip.CACHED if skipped else None)


# -- 5. the cross-project predicate ---------------------------------------------------------


def test_two_different_project_scopes_are_different_projects() -> None:
    web, api = memory("m1", scope="proj.alice.web"), memory("m2", scope="proj.alice.api")
    assert project_identity(web) == ("scope", "proj.alice.web")
    assert different_projects(web, api)
    assert filters.cross_project(Candidate.of(web, api, 0.9), {})


def test_one_project_scope_is_one_project() -> None:
    assert not different_projects(memory("m1", scope="proj.alice.web"), memory("m2", scope="proj.alice.web"))


def test_a_team_scope_pins_like_a_project() -> None:
    assert different_projects(memory("m1", scope="team.alice.infra"), memory("m2", scope="proj.alice.infra"))


def test_two_owners_projects_with_one_slug_are_different_projects() -> None:
    assert different_projects(memory("m1", scope="proj.alice.web"), memory("m2", owner="bob", scope="proj.bob.web"))


@pytest.mark.parametrize("other_scope", ["user.alice", "user.alice.core", "proj.alice.web"])
def test_an_unresolved_side_is_judged_as_usual(other_scope: str) -> None:
    personal = memory("m1", scope="user.alice")
    assert project_identity(personal) is None
    assert not different_projects(personal, memory("m2", scope=other_scope))


def test_imports_are_pinned_to_the_directory_they_came_from() -> None:
    web = memory("m1", source={"imported_from": "/work/web"})
    api = memory("m2", source={"imported_from": "/work/api"})
    web_again = memory("m3", source={"imported_from": "/work/web/"})
    assert project_identity(web) == ("dir", "/work/web")
    assert different_projects(web, api)
    assert not different_projects(web, web_again)


def test_an_import_from_inside_a_project_s_path_resolves_to_that_project() -> None:
    paths = {"/work/web": "proj.alice.web", "/work/api": "proj.alice.api"}
    imported = memory("m1", source={"imported_from": "/work/web/docs/notes"})
    assert project_identity(imported, paths) == ("scope", "proj.alice.web")
    assert not different_projects(imported, memory("m2", scope="proj.alice.web"), paths)
    assert different_projects(imported, memory("m3", scope="proj.alice.api"), paths)


def test_a_directory_that_merely_shares_a_prefix_is_not_inside_the_project() -> None:
    imported = memory("m1", source={"imported_from": "/work/webapp"})
    assert project_identity(imported, {"/work/web": "proj.alice.web"}) == ("dir", "/work/webapp")


def test_an_import_into_a_project_scope_is_pinned_by_the_scope() -> None:
    imported = memory("m1", scope="proj.alice.web", source={"imported_from": "/elsewhere"})
    assert project_identity(imported) == ("scope", "proj.alice.web")


def test_an_import_resolves_to_the_deepest_project_that_holds_its_directory() -> None:
    paths = {"/work": "proj.alice.mono", "/work/web": "proj.alice.web"}
    imported = memory("m1", source={"imported_from": "/work/web/src"})
    assert project_identity(imported, paths) == ("scope", "proj.alice.web")


def test_an_import_resolves_to_its_owner_s_project_when_another_owner_has_one_at_the_same_path(
    app: App, alice: Caller
) -> None:
    with app.store.tx(write=True) as tx:
        create_project(tx, "alice", "web", path="/work/web")
        create_project(tx, "bob", "web", path="/work/web")
    in_project = write(app, alice, "The staging database is green", scope="proj.alice.web")
    imported = write(app, alice, "The staging database is blue", source={"imported_from": "/work/web"})
    candidate = Candidate.of(row(app, in_project.id), row(app, imported.id), 0.76)
    with app.store.tx() as tx:
        paths = project_paths(tx, "alice")
        assert project_identity(candidate.b, paths) == ("scope", "proj.alice.web")
        assert screen(tx, candidate, "m", paths) is None


def test_project_paths_map_a_project_s_repository_to_its_scope(app: App) -> None:
    with app.store.tx(write=True) as tx:
        create_project(tx, "alice", "web", path="/work/web")
        create_project(tx, "alice", "notes")  # no path: nothing to map
    with app.store.tx() as tx:
        assert project_paths(tx, "alice") == {"/work/web": "proj.alice.web"}


CLAUDE = "/home/u/.claude/projects"


def test_an_agent_s_project_folder_resolves_to_the_project_whose_path_it_encodes() -> None:
    paths = {"/home/u/repos/shop": "proj.u.shop", "/home/u/repos/api": "proj.u.api"}
    imported = memory("m1", source={"imported_from": f"{CLAUDE}/-home-u-repos-shop/memory"})
    assert project_identity(imported, paths) == ("scope", "proj.u.shop")
    assert not different_projects(imported, memory("m2", scope="proj.u.shop"), paths)
    assert different_projects(imported, memory("m3", scope="proj.u.api"), paths)


def test_a_folder_name_is_matched_against_registered_paths_not_decoded() -> None:
    """``-home-u-repos-shop`` is /home/u/repos-shop as much as /home/u/repos/shop: the registered path decides."""
    imported = memory("m1", source={"imported_from": f"{CLAUDE}/-home-u-repos-shop"})
    assert project_identity(imported, {"/home/u/repos-shop": "proj.u.shop"}) == ("scope", "proj.u.shop")
    assert project_identity(imported, {"/home/u/repos/shop": "proj.u.shop"}) == ("scope", "proj.u.shop")
    both = {"/home/u/repos-shop": "proj.u.shop", "/home/u/repos/shop": "proj.u.other"}
    assert project_identity(imported, both) is None  # two projects fit: unresolved, judged


def test_claude_code_replaces_every_character_but_letters_and_digits() -> None:
    imported = memory("m1", source={"imported_from": f"{CLAUDE}/-home-u-my-app-v2/memory"})
    assert project_identity(imported, {"/home/u/my_app.v2": "proj.u.app"}) == ("scope", "proj.u.app")


def test_an_agent_folder_of_an_unregistered_repository_is_unresolved_and_judged() -> None:
    imported = memory("m1", source={"imported_from": f"{CLAUDE}/-srv-elsewhere/memory"})
    paths = {"/home/u/repos/shop": "proj.u.shop"}
    assert project_identity(imported, paths) is None
    assert not different_projects(imported, memory("m2", scope="proj.u.shop"), paths)


# -- screen: the first filter that drops the pair ------------------------------------------

Setup = Callable[[Tx, Candidate], None]


def settle(tx: Tx, pair: Candidate) -> None:
    raise_row(tx, pair, DisputeStatus.DISMISSED)


def declare(tx: Tx, pair: Candidate) -> None:
    tx.add_link(Link("lnk_declared", pair.b.id, pair.a.id, "supersedes", T0, "alice"))


def cache(tx: Tx, pair: Candidate) -> None:
    tx.put_judgement(pair.key, Judgement("unrelated", 0.99, "r", "judge-v1"), T0)


@pytest.mark.parametrize(
    ("applied", "expected"),
    [
        ([], None),
        (["cross"], Skip.CROSS_PROJECT),
        (["cache", "cross"], Skip.CACHED),
        (["declare", "cache", "cross"], Skip.DECLARED),
        (["settle", "declare", "cache", "cross"], Skip.SETTLED),
        (["dead", "settle", "declare", "cache", "cross"], Skip.DEAD),
    ],
)
def test_screen_reports_the_first_filter_in_the_spec_s_order(
    app: App, alice: Caller, applied: list[str], expected: Skip | None
) -> None:
    cross = "cross" in applied
    old = write(app, alice, "The staging database is green", **({"project_hint": "web"} if cross else {}))
    new = write(app, alice, "The staging database is blue", **({"project_hint": "api"} if cross else {}))
    assert (row(app, old.id).scope, row(app, new.id).scope) == (
        ("proj.alice.web", "proj.alice.api") if cross else ("user.alice", "user.alice")
    )
    a, b = row(app, old.id), row(app, new.id)
    if "dead" in applied:
        b = memory(b.id, scope=b.scope, live=False)
    pair = Candidate.of(a, b, 0.76)
    steps: dict[str, Setup] = {"settle": settle, "declare": declare, "cache": cache}
    with app.store.tx(write=True) as tx:
        for name in applied:
            if name in steps:
                steps[name](tx, pair)
    with app.store.tx() as tx:
        assert screen(tx, pair, "judge-v1", project_paths(tx, "alice")) is expected


def test_remember_and_the_sweep_agree_on_an_import_from_inside_a_project(app: App, alice: Caller) -> None:
    in_project = write(app, alice, "The staging database is green", project_hint="/work/web")
    imported = write(app, alice, "The staging database is blue", source={"imported_from": "/work/web/docs"})
    with app.store.tx() as tx:
        pair = Candidate.of(row(app, in_project.id), row(app, imported.id), 0.76)
        assert screen(tx, pair, "m", project_paths(tx, "alice")) is None  # the sweep: one project
    assert in_project.id in [s.id for s in imported.similar_existing]
