"""Several ``zm serve`` processes on one PostgreSQL database.

Writes from every process are kept exactly once (identical text in the same
scope is one live memory, whichever process got it first), and each
scheduled tick, with each owner's cycle in it, runs in exactly one process.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client

from tests.mcp.helpers import Deployment, base_env, call_ok, connect, start_server, stop_server, zm
from tests.memory.helpers import write
from tests.pg import PgServer
from tests.store.factories import AsSystem
from zero_memory.access.caller import Caller
from zero_memory.access.users import ensure_local_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.domain.records import RunStatus
from zero_memory.embedding import Embedder
from zero_memory.hygiene import runs
from zero_memory.settings import Settings
from zero_memory.store import open_store, system_tx
from zero_memory.store.base import Store

# A tick every 1.8 seconds.
TICK_HOURS = 0.0005
UNIQUE_WRITES = 12
IDENTICAL_WRITES = 6
MIN_TICKS = 3
GREEN, BLUE = "The staging database is green", "The staging database is blue"

SUBJECTS = [
    "The payments service retries webhooks with exponential backoff",
    "Our Kubernetes cluster runs in the Frankfurt region",
    "Invoices are rendered to PDF by a headless Chromium",
    "The mobile app caches the feed for ten minutes",
    "Feature flags live in LaunchDarkly",
    "The search index is rebuilt every night at 02:00",
    "Grafana dashboards are provisioned from the ops repository",
    "The billing cron job is owned by the finance team",
    "Customer emails go out through Postmark",
    "The data warehouse is Snowflake, loaded by Fivetran",
    "Staging is reset from a production snapshot every Monday",
    "Pull requests need two approvals before merging",
    "The GraphQL gateway enforces a query depth of eight",
    "Session cookies expire after fourteen days",
    "Images are resized on upload by a Lambda function",
    "The legacy SOAP API is frozen until its removal in June",
    "Load tests run with k6 against the perf environment",
    "Secrets are injected by Vault agent sidecars",
    "The CDN purges assets by surrogate key",
    "Translations are managed in Crowdin",
    "The ledger service is written in Kotlin",
    "Error budgets are reviewed every sprint",
    "Database migrations run in a pre-deploy job",
    "The recommendation model is retrained weekly",
]

pytestmark = pytest.mark.slow


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def two_servers(pg_url: str, tmp_path: Path) -> Iterator[tuple[Deployment, Deployment]]:
    """Two ``zm serve`` on one fresh PostgreSQL database, scheduled cycles every 1.8 s, users alice and bob."""
    # ZM_USER names an existing user: two servers starting together on a database without one would
    # race to create the local user (see the xfail test below).
    env = {
        **base_env(tmp_path),
        "ZM_DATABASE_URL": pg_url,
        "ZM_SECRET_KEY": "one-key-for-every-process",
        "ZM_HYGIENE_SCAN_INTERVAL_HOURS": str(TICK_HOURS),
        "ZM_USER": "alice",
    }
    logs = [tmp_path / "serve-a.log", tmp_path / "serve-b.log"]
    with ExitStack() as stack, ThreadPoolExecutor(2) as starting:
        # The operator's two `zm user add` at once migrate the new database together.
        adding = {name: starting.submit(zm, env, "user", "add", name, "--json") for name in ("alice", "bob")}
        tokens = {name: json.loads(added.result().stdout)["token"] for name, added in adding.items()}
        # Side by side: the second server comes up while the first may already run a tick.
        started = [starting.submit(start_server, env, log) for log in logs]
        for future in started:
            stack.callback(stop_if_started, future)
        deployments = [
            Deployment(home=tmp_path, env=env, tokens=tokens, url=future.result()[1], log=log)
            for future, log in zip(started, logs, strict=True)
        ]
        yield deployments[0], deployments[1]


def stop_if_started(future: Future[tuple[subprocess.Popen[bytes], str]]) -> None:
    if future.exception() is None:
        stop_server(future.result()[0])


async def remember(client: Client, content: str) -> dict[str, Any]:
    """A write in a session of its own, so same-session refinement leaves every write standing."""
    return await call_ok(
        client,
        "remember",
        {
            "content": content,
            "kind": "fact",
            "scope": "personal",
            "session_id": f"s-{abs(hash(content))}-{time.monotonic_ns()}",
        },
    )


@pytest.mark.anyio
async def test_two_servers_keep_every_write_once_and_run_every_tick_once(
    two_servers: tuple[Deployment, Deployment], pg_url: str
) -> None:
    a, b = two_servers
    started = time.monotonic()
    results: dict[str, list[tuple[str, dict[str, Any]]]] = {"a": [], "b": [], "bob": []}
    unique_a = [f"{text} (server a)" for text in SUBJECTS[:UNIQUE_WRITES]]
    unique_b = [f"{text} (server b)" for text in SUBJECTS[:UNIQUE_WRITES]]
    identical = SUBJECTS[UNIQUE_WRITES : UNIQUE_WRITES + IDENTICAL_WRITES]

    async with (
        connect(a, "http", "auto", client_name="server-a") as on_a,
        connect(b, "http", "auto", client_name="server-b") as on_b,
        connect(b, "http", "auto", user="bob", client_name="bob-on-b") as bob_on_b,
    ):

        async def writer(name: str, client: Client, contents: list[str]) -> None:
            for content in contents:
                results[name].append((content, await remember(client, content)))

        # Each server gets its own writes and, interleaved, the same identical texts at the same moment.
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                writer, "a", on_a, [c for pair in zip(unique_a, identical * 2, strict=False) for c in pair]
            )
            tasks.start_soon(
                writer, "b", on_b, [c for pair in zip(unique_b, identical * 2, strict=False) for c in pair]
            )
            tasks.start_soon(writer, "bob", bob_on_b, identical)

        # A near paraphrase written through one process finds the other process's memory.
        green = await remember(on_a, GREEN)
        blue = await remember(on_b, BLUE)
        assert blue["status"] == "created"
        assert green["id"] in [s["id"] for s in blue.get("similar_existing", [])]

    acknowledged = results["a"] + results["b"]
    by_content: dict[str, set[str]] = {}
    for content, result in acknowledged:
        assert result["status"] in ("created", "absorbed"), result
        by_content.setdefault(content, set()).add(result["id"])
    # Every write of one text by alice, from either server, acknowledged the same memory.
    assert all(len(ids) == 1 for ids in by_content.values()), by_content
    statuses = Counter(result["status"] for _, result in acknowledged)
    assert statuses == {
        "created": 2 * UNIQUE_WRITES + IDENTICAL_WRITES,
        "absorbed": 2 * (2 * IDENTICAL_WRITES) - IDENTICAL_WRITES,
    }

    store = AsSystem(open_store(pg_url))
    try:
        with store.tx() as tx:
            alices = [m for m in tx.iter_memories() if m.owner == "alice" and m.live]
            bobs = [m for m in tx.iter_memories() if m.owner == "bob" and m.live]
        kept = Counter(m.content for m in alices)
        assert kept == Counter({c: 1 for c in [*by_content, GREEN, BLUE]})
        assert {m.id for m in alices} == {i for ids in by_content.values() for i in ids} | {green["id"], blue["id"]}
        # bob's identical texts are his own memories, not absorbed into alice's.
        assert sorted(m.content for m in bobs) == sorted(identical)
        assert {r["id"] for _, r in results["bob"]} == {m.id for m in bobs}

        wait_for_ticks(store, MIN_TICKS, deadline=started + 90)
        check_each_tick_ran_once(store)
    finally:
        store.close()


def wait_for_ticks(store: Store, count: int, *, deadline: float) -> None:
    """Wait until ``count`` ticks that began after the last user was added have completed."""
    while True:
        with store.tx() as tx:
            since = max(u.created_at for u in tx.list_users())
            done = [
                r
                for r in tx.list_runs(limit=1000)
                if r.id.startswith("run_tick_") and r.status == RunStatus.COMPLETED and r.started_at > since
            ]
        if len(done) >= count:
            return
        assert time.monotonic() < deadline, f"only {len(done)} ticks completed"
        time.sleep(0.5)


def check_each_tick_ran_once(store: Store) -> None:
    """Each tick ran every owner's cycle once, in the one process that claimed the tick.

    (Cycles of one owner from overlapping ticks exclude each other by the owner's
    advisory lock, which tests/store/test_postgres_backend.py shows across processes.)
    """
    with store.tx() as tx:
        every = tx.list_runs(limit=10_000)
        users = tx.list_users()
    owners = {u.id for u in users}
    since = max(u.created_at for u in users)
    ticks = [r for r in every if r.id.startswith("run_tick_")]
    owner_runs = {r.id: r for r in every if r.kind == "scheduled" and r.owner is not None}
    referenced: Counter[str] = Counter()
    for tick in ticks:
        assert tick.owner is None and tick.kind == "scheduled" and tick.started_by == "scheduler"
        if tick.status != RunStatus.COMPLETED:
            continue
        listed = dict(note.split(": ", 1) for note in tick.summary.get("notes", []))
        # A tick lists the users there were when it began: all of them, once they were all added.
        assert set(listed) <= owners and (tick.started_at < since or set(listed) == owners), tick.summary
        for owner, run_id in listed.items():
            assert owner_runs[run_id].owner == owner
            referenced[run_id] += 1
    # Every owner cycle belongs to exactly one tick, and no tick ran twice: the cycles no completed
    # tick lists are at most those of the ticks still running when the servers stopped.
    assert all(n == 1 for n in referenced.values())
    unfinished = sum(1 for tick in ticks if tick.status != RunStatus.COMPLETED)
    assert len(set(owner_runs) - set(referenced)) <= unfinished * len(owners)


@pytest.fixture
def second_app(make_app: Callable[..., App], embedder: Embedder) -> Iterator[Callable[[App], App]]:
    """Another app (its own connection pool, as another process has) on an app's PostgreSQL database."""
    built: list[App] = []

    def make(first: App) -> App:
        url: str = first.store.url  # type: ignore[attr-defined]
        app = build_app(
            Settings.from_environ({"ZM_HOME": str(first.settings.home) + "-2", "ZM_DATABASE_URL": url}),
            embedder=embedder,
        )
        built.append(app)
        return app

    yield make
    for app in built:
        app.close()


def test_the_same_text_remembered_at_once_through_two_stores_is_one_live_memory(
    make_app: Callable[..., App], second_app: Callable[[App], App]
) -> None:
    first = make_app(backend="postgres")
    apps = [first, second_app(first)]
    alice = Caller("alice", client="test")
    texts = [f"{subject} (race {n})" for n, subject in enumerate(SUBJECTS[:8])]
    outcomes: list[list[tuple[str, str]]] = [[], []]
    barrier = threading.Barrier(2)

    def racer(side: int) -> None:
        for text in texts:
            barrier.wait(timeout=30)
            result = write(apps[side], alice, text)
            outcomes[side].append((result.status, result.id))

    threads = [threading.Thread(target=racer, args=(side,)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for (status_0, id_0), (status_1, id_1) in zip(*outcomes, strict=True):
        assert id_0 == id_1
        assert sorted([status_0, status_1]) == ["absorbed", "created"]
    with system_tx(first.store, "test") as tx:
        live = [m for m in tx.iter_memories() if m.live]
    assert sorted(m.content for m in live) == sorted(texts)
    assert {m.id for m in live} == {memory_id for _, memory_id in outcomes[0]}


def test_a_server_starting_while_another_runs_a_tick_leaves_the_tick_running(
    make_app: Callable[..., App], second_app: Callable[[App], App]
) -> None:
    first = make_app(backend="postgres")
    # As run_tick does: the tick's run lock is taken before the run is claimed, and held while it runs.
    with first.store.advisory_lock(runs.lock_name("run_tick_1")) as locked:
        assert locked
        parent = runs.start(
            first, owner=None, kind="scheduled", started_by="scheduler", dry_run=False, run_id="run_tick_1"
        )
        assert parent is not None
        # What the second process's lifespan does on start.
        assert runs.interrupt_orphans(second_app(first)) == []


def test_two_servers_starting_at_once_on_a_new_database_agree_on_the_local_user(pg_server: PgServer) -> None:
    failures = []
    for _ in range(5):
        url = pg_server.fresh_url()
        failures += start_two_at_once(url)
        pg_server.drop(url)
    assert failures == []


def start_two_at_once(url: str) -> list[str]:
    """What each ``zm serve`` does first (find or create the local user), from two stores at once."""
    stores = [AsSystem(open_store(url, dim=16)) for _ in range(2)]
    barrier = threading.Barrier(2)
    failures: list[str] = []

    def start(store: Store) -> None:
        barrier.wait(timeout=30)
        try:
            ensure_local_user(store, None)
        except Exception as error:  # what makes `zm serve` exit at start
            failures.append(repr(error))

    threads = [threading.Thread(target=start, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for store in stores:
        store.close()
    return failures
