"""Builds the application: store, embedder, judge, services. Tests call it with fakes."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zero_memory.clock import Clock, utcnow
from zero_memory.embedding import Embedder, build_embedder
from zero_memory.settings import Settings
from zero_memory.store import Store, open_store

if TYPE_CHECKING:
    from zero_memory.domain.memory import Memory


@dataclass
class App:
    settings: Settings
    store: Store
    embedder: Embedder
    clock: Clock = utcnow
    judge_factory: Callable[[str | None], Any] | None = None
    after_write: list[Callable[[Memory], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        self.store.close()


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


def build_app(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    clock: Clock = utcnow,
    judge_factory: Callable[[str | None], Any] | None = None,
) -> App:
    embedder = embedder or build_embedder(settings.embedding_model)
    store = store or open_store(settings.database_url, dim=embedder.dim)
    settings = settings.with_changes(secret_key=secret_key(settings))
    return App(settings=settings, store=store, embedder=embedder, clock=clock, judge_factory=judge_factory)
