"""A bulk import writes a batch at a time, on both stores: each text once, an audit row per memory, and a batch
that fails leaves nothing of itself behind."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import content_hash
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.memory import imports
from zero_memory.memory.imports import import_path
from zero_memory.store import system_tx

# Refuses the audit link of a memory whose text starts with "poison": the batch's memories and audit rows
# are written by then, in the batch's transaction.
SQLITE_POISON = """
CREATE TRIGGER poison BEFORE INSERT ON audit_memories
WHEN EXISTS (SELECT 1 FROM memories WHERE id = NEW.memory_id AND content LIKE 'poison%')
BEGIN SELECT RAISE(ABORT, 'poisoned'); END
"""
POSTGRES_POISON = """
CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM memories WHERE id = NEW.memory_id AND content LIKE 'poison%') THEN
        RAISE EXCEPTION 'poisoned';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER poison BEFORE INSERT ON audit_memories FOR EACH ROW EXECUTE FUNCTION poison();
"""


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., App]) -> App:
    return make_app(backend=request.param)


def records(path: Path, contents: list[str]) -> Path:
    path.write_text("".join(json.dumps({"content": c}) + "\n" for c in contents))
    return path


def stored(app: App, owner: str) -> list[str]:
    with system_tx(app.store, "test") as tx:
        return sorted(m.content for m in tx.iter_memories() if m.owner == owner)


def import_audits(app: App) -> list[list[str]]:
    with system_tx(app.store, "test") as tx:
        return [entry.memory_ids for entry in tx.audit_actions("import")]


def execute(app: App, script: str) -> None:
    """DDL on the app's database, past the store."""
    url = app.settings.database_url
    if app.store.backend == "sqlite":
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.executescript(script)
    else:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(script)


def test_each_text_is_stored_once_whether_repeated_in_a_batch_or_already_stored(
    app: App, alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imports, "BATCH", 4)
    first = import_path(app, alice, records(tmp_path / "a.jsonl", ["alpha", "beta"]), scope="personal")
    assert (first.imported, first.skipped) == (2, 0)
    # Batches of four: [alpha, gamma, gamma, delta] [beta, delta, epsilon, alpha] [epsilon]
    again = ["alpha", "gamma", "gamma", "delta", "beta", "delta", "epsilon", "alpha", "epsilon"]
    second = import_path(app, alice, records(tmp_path / "b.jsonl", again), scope="personal")
    assert (second.imported, second.skipped) == (3, 6)
    assert stored(app, "alice") == ["alpha", "beta", "delta", "epsilon", "gamma"]


def test_another_owner_s_copy_of_a_text_does_not_skip_it(app: App, alice: Caller, bob: Caller, tmp_path: Path) -> None:
    import_path(app, bob, records(tmp_path / "bob.jsonl", ["shared text"]), scope="personal")
    report = import_path(app, alice, records(tmp_path / "alice.jsonl", ["shared text"]), scope="personal")
    assert report.imported == 1
    assert stored(app, "alice") == ["shared text"]


def test_every_imported_memory_has_its_own_audit_row(
    app: App, alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imports, "BATCH", 3)
    contents = [f"note {n}" for n in range(8)]
    import_path(app, alice, records(tmp_path / "notes.jsonl", [*contents, "note 1"]), scope="personal")
    with system_tx(app.store, "test") as tx:
        memories = {m.content: m for m in tx.iter_memories()}
        for content in contents:
            trail = tx.audit_for_memory(memories[content].id)
            assert [(e.action, e.memory_ids) for e in trail] == [("import", [memories[content].id])]
            assert trail[0].payload["scope"] == memories[content].scope
            assert trail[0].payload["imported_from"] == str(tmp_path.resolve())
    assert sorted(ids[0] for ids in import_audits(app)) == sorted(m.id for m in memories.values())


def test_a_batch_that_fails_leaves_nothing_of_itself_and_a_rerun_loses_nothing(
    app: App, alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imports, "BATCH", 5)
    execute(app, SQLITE_POISON if app.store.backend == "sqlite" else POSTGRES_POISON)
    contents = [f"note {n}" for n in range(7)] + ["poison pill"] + [f"note {n}" for n in range(7, 12)]
    path = records(tmp_path / "notes.jsonl", contents)
    with pytest.raises((sqlite3.DatabaseError, psycopg.Error)):
        import_path(app, alice, path, scope="personal")
    assert ahead_threads() == []
    # The first batch is committed; nothing of the second (memories, audit rows or links) is.
    assert stored(app, "alice") == sorted(contents[:5])
    assert len(import_audits(app)) == 5
    execute(app, "DROP TRIGGER poison" if app.store.backend == "sqlite" else "DROP TRIGGER poison ON audit_memories")
    report = import_path(app, alice, path, scope="personal")
    assert (report.imported, report.skipped) == (len(contents) - 5, 5)
    assert stored(app, "alice") == sorted(contents)
    assert len(import_audits(app)) == len(contents)


def test_two_imports_of_the_same_records_at_once_store_each_text_once(
    app: App, alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import takes the owner's write lock for each batch, as remember does: the second to get it sees
    what the first wrote."""
    monkeypatch.setattr(imports, "BATCH", 10)
    contents = [f"note {n}" for n in range(200)]
    path = records(tmp_path / "notes.jsonl", contents)
    reports: list[imports.ImportReport] = []
    threads = [threading.Thread(target=lambda: reports.append(import_path(app, alice, path, scope="personal")))]
    threads.append(threading.Thread(target=lambda: reports.append(import_path(app, alice, path, scope="personal"))))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(r.imported for r in reports) == len(contents)
    assert sum(r.skipped for r in reports) == len(contents)
    with system_tx(app.store, "test") as tx:
        assert all(len(tx.find_by_hash("alice", content_hash(c))) == 1 for c in contents)


def ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("zm-ahead")]


class FailingEmbedder(HashingEmbedder):
    """Fails the model's pass over any text starting with "explode"."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(text.startswith("explode") for text in texts):
            raise RuntimeError("the model failed")
        return super().embed(texts)


def test_a_failing_embedding_surfaces_in_the_caller_and_its_batch_and_the_later_ones_write_nothing(
    make_app: Callable[..., App], backend: str, alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batches after the failing one may be embedded already (ahead of the writes): none is written."""
    app = make_app(backend=backend, embedder=FailingEmbedder())
    monkeypatch.setattr(imports, "BATCH", 5)
    contents = [f"note {n}" for n in range(7)] + ["explode"] + [f"note {n}" for n in range(7, 30)]
    path = records(tmp_path / "notes.jsonl", contents)
    with pytest.raises(RuntimeError, match="the model failed"):
        import_path(app, alice, path, scope="personal", advance=lambda n: advanced.append(n))
    assert ahead_threads() == []
    assert stored(app, "alice") == sorted(contents[:5])
    assert len(import_audits(app)) == 5
    assert advanced == [5]


class PriorityNotingEmbedder(HashingEmbedder):
    """Embeds as the hashing model does, and notes the priority (niceness) of the process embedding."""

    def __init__(self, notes: Path) -> None:
        super().__init__()
        self.notes = notes

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self.notes.open("a") as handle:
            handle.write(f"{os.getpid()} {os.nice(0)}\n")
        return super().embed(texts)


def test_an_import_embeds_below_the_priority_of_the_process_serving_recalls(
    make_app: Callable[..., App], alice: Caller, tmp_path: Path
) -> None:
    """A server answering recalls while a team's history is imported gets the cores first."""
    notes = tmp_path / "priorities"
    app = make_app(embedder=PriorityNotingEmbedder(notes))
    import_path(
        app, alice, records(tmp_path / "notes.jsonl", ["the build uses uv", "deploys go on Tuesdays"]), scope="personal"
    )
    embedded = {tuple(map(int, line.split())) for line in notes.read_text().split("\n") if line}
    assert embedded and {pid for pid, _ in embedded}.isdisjoint({os.getpid()})
    assert {niceness for _, niceness in embedded} == {min(os.nice(0) + imports.IMPORT_NICENESS, 19)}
    assert stored(app, "alice") == ["deploys go on Tuesdays", "the build uses uv"]


advanced: list[int] = []


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    advanced.clear()
    return str(request.param)


SECRET = "AKIA" + "Z7Q3XKJ4M2P5R8T6"
LINES = st.one_of(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon"]).map(lambda c: {"content": c}),
    st.sampled_from(["alpha", "zeta"]).map(lambda c: {"content": c, "kind": "decision", "source": {"file": c}}),
    st.just({"content": "   "}),
    st.just({"content": f"the key {SECRET}"}),
    st.just({"content": "no such scope", "scope": "nowhere/at/all"}),
    st.just({"kind": "fact"}),
    st.just({"content": "alpha", "kind": "no-such-kind"}),
    st.just("{not json"),
)


def import_rows(app: App) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What an import leaves, but for ids and times: the memories, and the audit rows in their order."""
    with system_tx(app.store, "test") as tx:
        memories = {m.id: m for m in tx.iter_memories()}
        rows = sorted(
            (
                m.content,
                m.kind.value,
                m.scope,
                m.content_hash,
                sorted(m.source.items()),
                m.status.value,
                m.rank.value,
                m.owner,
            )
            for m in memories.values()
        )
        audits = [
            (entry.actor, [memories[i].content for i in entry.memory_ids], sorted(entry.payload.items()))
            for entry in tx.audit_actions("import")
        ]
    return rows, audits


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=40), batch=st.integers(1, 6), ahead=st.integers(1, 3))
def test_embedding_ahead_leaves_what_one_batch_at_a_time_leaves(
    make_app: Callable[..., App],
    alice: Caller,
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[object],
    batch: int,
    ahead: int,
) -> None:
    """The same memories, audit rows, report and progress, with duplicates across and within batches,
    refused and unreadable records, whether the next batches are embedded ahead of the writes or not."""
    path = tmp_path_factory.mktemp("records") / "records.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    left = []
    for depth in (0, ahead):
        app = make_app(embedder=HashingEmbedder())
        progress: list[int] = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(imports, "BATCH", batch)
            patch.setattr(imports, "EMBED_AHEAD", depth)
            import_path(app, alice, records(path.with_suffix(".seed"), ["alpha"]), scope="personal")
            report = import_path(app, alice, path, scope="personal", advance=progress.append)
        left.append((report.to_dict(), progress, import_rows(app)))
    assert left[0] == left[1]
