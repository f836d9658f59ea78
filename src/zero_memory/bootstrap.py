"""Builds the application: store, embedder, judge, services. Tests call it with fakes."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from threadpoolctl import threadpool_limits

from zero_memory.app import App
from zero_memory.clock import Clock, utcnow
from zero_memory.embedding.base import Embedder
from zero_memory.embedding.factory import build_embedder
from zero_memory.hygiene.cycle import on_write
from zero_memory.judge.base import JudgeFactory
from zero_memory.judge.owners import OwnerJudges
from zero_memory.settings import Settings
from zero_memory.store import Store, open_store


def secret_key(settings: Settings) -> str:
    """``ZM_SECRET_KEY``, else a key generated once into the data directory (mode 0600)."""
    if settings.secret_key:
        return settings.secret_key
    path = Path(settings.home) / "secret_key"
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key)
    return key


def single_threaded_blas() -> None:
    """Run numpy's BLAS on one thread in this process.

    A server answers many small requests at once: an embedding or a vector
    search split across threads spends more time synchronising than computing,
    and on a busy machine it is an order of magnitude slower (measured: one
    query embedding 5 ms on one thread, 70 ms on two, with other work running).
    """
    threadpool_limits(limits=1, user_api="blas")


def build_app(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    clock: Clock = utcnow,
    judge_factory: JudgeFactory | None = None,
) -> App:
    """The app for ``settings``; ``judge_factory`` defaults to each owner's judge (``judge.owners``)."""
    single_threaded_blas()
    embedder = embedder or build_embedder(settings.embedding_model, cache=settings.home / "cache")
    store = store or open_store(settings.database_url, dim=embedder.dim)
    settings = settings.with_changes(secret_key=secret_key(settings))
    app = App(
        settings=settings,
        store=store,
        embedder=embedder,
        clock=clock,
        judge_factory=judge_factory or OwnerJudges(settings, store, clock),
    )
    if settings.hygiene_on_write:
        app.after_write.append(on_write(app))
    return app
