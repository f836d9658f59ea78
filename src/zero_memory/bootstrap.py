"""Builds the application: store, embedder, judge, services. Tests call it with fakes."""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zero_memory.clock import Clock, utcnow
from zero_memory.embedding import Embedder, build_embedder
from zero_memory.settings import Settings
from zero_memory.store import Store, open_store

if TYPE_CHECKING:
    from zero_memory.domain.memory import Memory
    from zero_memory.judge.owners import JudgeFactory


@dataclass
class App:
    settings: Settings
    store: Store
    embedder: Embedder
    clock: Clock = utcnow
    # (owner, run_id) -> the judge acting for that owner; build_app installs judge.owners.OwnerJudges.
    judge_factory: JudgeFactory | None = None
    after_write: list[Callable[[Memory], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _executor: ThreadPoolExecutor | None = None
    _pending: list[Future[Any]] = field(default_factory=list)

    def background(self, work: Callable[[], Any]) -> Future[Any]:
        """Run work on the app's background thread (hygiene runs, write-triggered scans)."""
        with self.lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zm-background")
            future = self._executor.submit(_logged, work)
            self._pending = [f for f in self._pending if not f.done()] + [future]
        return future

    def wait_idle(self, timeout: float = 60) -> None:
        """Wait for the background work submitted so far (tests, shutdown)."""
        with self.lock:
            pending = list(self._pending)
        for future in pending:
            future.result(timeout=timeout)

    def close(self) -> None:
        with self.lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        self.store.close()


def _logged(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except Exception:
        logging.getLogger("zero_memory").exception("background work failed")
        raise


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
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def build_app(
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    clock: Clock = utcnow,
    judge_factory: JudgeFactory | None = None,
) -> App:
    single_threaded_blas()
    embedder = embedder or build_embedder(settings.embedding_model)
    store = store or open_store(settings.database_url, dim=embedder.dim)
    settings = settings.with_changes(secret_key=secret_key(settings))
    app = App(settings=settings, store=store, embedder=embedder, clock=clock, judge_factory=judge_factory)
    if judge_factory is None:
        # Imported when an app is built, so importing the App type does not pull in the judge package.
        from zero_memory.judge.owners import OwnerJudges

        app.judge_factory = OwnerJudges(app)
    if settings.hygiene_on_write:
        from zero_memory.hygiene.cycle import on_write

        app.after_write.append(on_write(app))
    return app
