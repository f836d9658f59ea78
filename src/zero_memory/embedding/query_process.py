"""Queries embedded in a process of their own while the process that asks reads the store.

A recall on SQLite embeds its query and reads the store in one process, and both hold the GIL for most of
their time: on a thread beside the reads the model's many small numpy steps each waited for the GIL back
(4 ms an embedding against 1.5 ms alone), so recall embedded first and read after. In a process of its own
the model has a GIL of its own: the query goes to it as the recall starts, the transaction, the session,
the scopes and the full text are read meanwhile, and the vector is taken when the index is searched.

One query at a time: a recall that finds the process busy with another's query, not yet ready, or gone
embeds its own as before, so a burst of calls never queues behind it and nothing depends on it. The
process builds its model from the same name and data directory as the server's (``build_embedder``); one
whose model is not the server's (an embedder handed to ``build_app``) is closed at once and never asked.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from zero_memory.embedding.base import Embedder, embed_queries

log = logging.getLogger(__name__)

READY = "ready"
# A query's vector not back by then (the bundled model takes milliseconds) means a child stuck: it is stopped,
# and the caller embeds the query itself.
TAKE_TIMEOUT_S = 10.0
# The first of that wait spent looking for the answer without sleeping (``QueryProcess._answered``): the
# bundled model's comes within 1-3 ms of the take.
SPIN_S = 0.005
CLOSE_WAIT_S = 5.0  # for the child to end once its pipe is closed, before it is killed
_SOURCE = Path(__file__).resolve().parents[2]  # the folder this package is imported from, for the child too


class QueryProcess:
    """A child process embedding one query at a time for this one, started by ``start``."""

    def __init__(self, model: str, cache: Path | None, expected: Embedder) -> None:
        """``model`` and ``cache`` as ``build_embedder`` takes them; ``expected``: the embedder it stands in for,
        whose model id and dimension the child's must match."""
        self._model, self._cache = model, cache
        self._model_id, self._dim = expected.model_id, expected.dim
        self._lock = threading.Lock()  # held from a query sent until its vector is taken
        self._conn: Connection | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._closed = False

    def start(self) -> None:
        """Start the child: it loads its model and says so; until then ``ask`` answers None."""
        with self._lock:
            if self._closed or self._process is not None:
                return
            ours, theirs = socket.socketpair()
            # A new interpreter, not multiprocessing's spawn (which runs the parent's main module again in the
            # child: a library user's unguarded script would run twice) nor a fork (this process runs threads).
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(_SOURCE), *filter(None, [env.get("PYTHONPATH")])])
            command = [sys.executable, "-m", __name__, str(theirs.fileno()), self._model, str(self._cache or "")]
            try:
                self._process = subprocess.Popen(command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
            except OSError as error:
                ours.close()
                log.warning("the query embedding process did not start (%s); queries are embedded here", error)
                return
            finally:
                theirs.close()
            self._conn = Connection(ours.detach())

    @property
    def ready(self) -> bool:
        with self._lock:
            return self._is_ready()

    def _is_ready(self) -> bool:
        """Whether the child has said it is ready (read if it has said so since); under the lock."""
        if self._ready or self._conn is None:
            return self._ready
        try:
            if not self._conn.poll():
                return False
            said = self._conn.recv()
        except (EOFError, OSError):
            self._drop("did not start")
            return False
        if said != (READY, self._model_id, self._dim):
            self._drop(f"embeds with {said!r}, not the server's {self._model_id} ({self._dim} dimensions)")
            return False
        self._ready = True
        return True

    def ask(self, query: str) -> Asked | None:
        """The query sent to the child, its vector to be taken from what is returned; None when the child is
        busy, not ready or gone (the caller embeds the query itself)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if not self._is_ready():
                self._lock.release()
                return None
            assert self._conn is not None
            self._conn.send(query)
        except (OSError, ValueError):
            self._drop("is gone")
            self._lock.release()
            return None
        return Asked(self)

    def _take(self, spin: bool) -> np.ndarray | None:
        """The vector of the query sent, once it comes; None if the child failed or died. Releases the lock."""
        try:
            assert self._conn is not None
            if not self._answered(spin):
                self._drop(f"did not answer in {TAKE_TIMEOUT_S:g} s", kill=True)
                return None
            answer = self._conn.recv_bytes()
        except (EOFError, OSError):
            self._drop("died")
            return None
        finally:
            self._lock.release()
        if not answer:
            return None  # the child's model failed on this query: the caller's will say why
        return np.frombuffer(answer, dtype=np.float32)

    def _answered(self, spin: bool) -> bool:
        """Whether the child's answer came within ``TAKE_TIMEOUT_S``: with ``spin``, looked for without sleeping
        for the first ``SPIN_S``, the core yielded to anything else runnable between looks, then waited for
        asleep.

        A caller asleep in ``poll`` when the vector comes must be woken first. On this machine's virtual cores a
        recall's round trip to the child (1,000 memories, 600 recalls) took 2.04-2.08 ms asleep, 1.69-1.75 ms
        spinning (an embedding in the caller's process: 1.47-1.58 ms), and the reads after it took 0.68 ms
        against 0.78 (the core kept running, its caches warm). The spin costs the wait in CPU (~1 ms a recall
        at 1,000 memories), the core given up to whatever else wants it. A child slower than the spin is
        waited for asleep."""
        assert self._conn is not None
        if not spin:
            return self._conn.poll(TAKE_TIMEOUT_S)
        spun_until = time.monotonic() + SPIN_S
        while not self._conn.poll():
            if time.monotonic() >= spun_until:
                return self._conn.poll(max(0.0, TAKE_TIMEOUT_S - SPIN_S))
            os.sched_yield()
        return True

    def _drop(self, why: str, *, kill: bool = False) -> None:
        """Never ask the child again (``kill``: stop it at once); under the lock."""
        if self._conn is not None and not self._closed:
            log.warning("the query embedding process %s; queries are embedded in this process", why)
        self._ready = False
        self._close_child(wait_s=0 if kill else CLOSE_WAIT_S)

    def _close_child(self, wait_s: float = 0.0) -> None:
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            conn.close()  # the child reads the end of its pipe, and returns
        if process is not None:
            try:
                process.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self) -> None:
        """Stop the child (waits for a query being embedded)."""
        with self._lock:
            self._closed = True
            self._ready = False
            self._close_child(wait_s=CLOSE_WAIT_S)


class Asked:
    """A query sent: its vector is taken once, by ``take`` (None: embed it here) or ``forget``."""

    def __init__(self, process: QueryProcess) -> None:
        self._process: QueryProcess | None = process

    def take(self, *, spin: bool = True) -> np.ndarray | None:
        """``spin``: look for the vector without sleeping at first (``QueryProcess._answered``); not while another
        thread of this process works for the caller (each look takes the interpreter lock from it)."""
        process, self._process = self._process, None
        return None if process is None else process._take(spin)

    def forget(self) -> None:
        """Take the vector and drop it (a recall that failed before it needed it): the child is free again."""
        self.take(spin=False)


def _serve(conn: Connection, model: str, cache: Path | None) -> None:
    """The child: build the model, say which it is, then embed each query received until the pipe closes."""
    from threadpoolctl import threadpool_limits

    from zero_memory.embedding.factory import build_embedder

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which closes the pipe
    threadpool_limits(limits=1, user_api="blas")  # as the server's own (bootstrap.single_threaded_blas)
    embedder = build_embedder(model, cache=cache)
    embed_queries(embedder, ["warm-up"])  # the model's first pass loads it
    conn.send((READY, embedder.model_id, embedder.dim))
    while True:
        try:
            query = conn.recv()
        except (EOFError, OSError):
            return
        try:
            vector = np.ascontiguousarray(embed_queries(embedder, [query])[0], dtype=np.float32)
        except Exception:
            conn.send_bytes(b"")
            continue
        conn.send_bytes(vector.tobytes())


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])), sys.argv[2], Path(sys.argv[3]) if sys.argv[3] else None)
