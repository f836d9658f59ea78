"""Several processes writing one SQLite file through the write path lose nothing."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from zero_memory.access.caller import Caller
from zero_memory.bootstrap import build_app
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember
from zero_memory.settings import Settings
from zero_memory.store import SYSTEM

WRITES_PER_PROCESS = 60


def _writer(home: str, worker: int, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    app = build_app(Settings.from_environ({"ZM_HOME": home}), embedder=HashingEmbedder())
    caller = Caller("alice", client=f"worker-{worker}")
    ids = []
    for n in range(WRITES_PER_PROCESS):
        result = remember(
            app,
            caller,
            RememberRequest(
                content=f"worker {worker} wrote fact number {n} about subsystem {n * 7 + worker}",
                kind="fact",
                scope="personal",
            ),
        )  # type: ignore[arg-type]
        ids.append((result.status, result.id))
    app.close()
    results.put(ids)


def test_concurrent_writers_from_two_processes_lose_nothing(tmp_path: Path) -> None:
    home = str(tmp_path / "shared")
    setup = build_app(Settings.from_environ({"ZM_HOME": home}), embedder=HashingEmbedder())
    from zero_memory.access.users import add_user

    with setup.store.tx(write=True) as tx:
        add_user(tx, "alice", is_local=True)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_writer, args=(home, w, results)) for w in range(3)]
    for process in workers:
        process.start()
    acknowledged = [pair for _ in workers for pair in results.get(timeout=120)]
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert all(status == "created" for status, _ in acknowledged)
    ids = {memory_id for _, memory_id in acknowledged}
    assert len(ids) == 3 * WRITES_PER_PROCESS
    with setup.store.tx() as tx:
        assert tx.count_memories() == 3 * WRITES_PER_PROCESS
        assert set(tx.get_memories(ids, SYSTEM)) == ids
    # This process's vector index follows writes made by the others.
    with setup.store.tx() as tx:
        vector = setup.embedder.embed(["worker 2 wrote fact number 5 about subsystem 37"])[0]
        top = tx.similar(vector, floor=0.5, limit=1, owner="alice")
    assert top and top[0].memory.content == "worker 2 wrote fact number 5 about subsystem 37"
    setup.close()
