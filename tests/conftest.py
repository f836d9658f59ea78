"""Fixtures shared by every test folder: a real app on a real SQLite file (or PostgreSQL), users, callers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pg import migrated_pg_url, session_server
from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.embedding import Embedder
from zero_memory.embedding.usem import UniversalSentenceEncoder
from zero_memory.settings import Settings
from zero_memory.store import system_tx


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real default model, loaded once per test session."""
    model = UniversalSentenceEncoder()
    model.embed(["warm up"])
    return model


@pytest.fixture
def make_app(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[..., App]]:
    """Build an app on a fresh SQLite file; ``environ`` overrides ``ZM_*`` variables, other keywords go to
    ``build_app``. ``backend="postgres"`` puts it on a new PostgreSQL database instead, already migrated by this
    code (a template copy, tests/pg.py): the app's own start finds nothing to apply."""
    built: list[App] = []
    databases: list[str] = []

    def make(environ: dict[str, str] | None = None, *, backend: str = "sqlite", **kwargs: Any) -> App:
        # No query process: a server's would load a second model for every test that serves (the tests of
        # that process turn it on).
        env = {"ZM_HOME": str(tmp_path / f"home{len(built)}"), "ZM_USER": "alice", "ZM_QUERY_PROCESS": "0"}
        kwargs.setdefault("embedder", embedder)
        if backend == "postgres":
            databases.append(migrated_pg_url(kwargs["embedder"].dim))
            env["ZM_DATABASE_URL"] = databases[-1]
        elif backend != "sqlite":
            raise ValueError(f"backend: sqlite or postgres, not {backend!r}")
        env.update(environ or {})
        app = build_app(Settings.from_environ(env), **kwargs)
        built.append(app)
        with system_tx(app.store, "test-setup", write=True) as tx:
            users.add_user(tx, "alice", is_local=True)
            users.add_user(tx, "bob")
        return app

    yield make
    for app in built:
        app.close()
    for url in databases:
        session_server().drop(url)


@pytest.fixture
def app(make_app: Callable[..., App]) -> App:
    """An app with two users, alice (the local user) and bob."""
    return make_app()


@pytest.fixture
def alice() -> Caller:
    return Caller("alice", client="test-client", session_id=None)


@pytest.fixture
def bob() -> Caller:
    return Caller("bob", client="test-client", session_id=None)
