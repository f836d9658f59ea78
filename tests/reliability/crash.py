"""Killing ``zm serve`` mid-work and checking what it left: the crash tests' and ``benchmarks/crash.py``'s machinery.

Two scenarios, each a function of a ``Service`` that runs one cycle and
raises ``AssertionError`` on the first broken promise:

- ``write_burst_cycle``: writers send ``remember`` calls over HTTP, the
  server is SIGKILLed once ``kill_after`` writes were acknowledged, and
  restarted on the same data. Every acknowledged write is there, whole and
  readable through the server; nothing appears that nobody sent, nor twice.
- ``hygiene_cycle``: a hygiene run judged by a slow fake OpenAI-compatible
  judge is SIGKILLed while the judge holds its ``kill_at``-th answer. On
  restart the run is ``interrupted``, the database is consistent, and a new
  run judges exactly the pairs whose judgement was not committed, ending in
  the state one uninterrupted run reaches.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.client.client import Client

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import call_ok, connect
from tests.reliability import aio
from tests.reliability.consistency import assert_consistent
from tests.reliability.service import Service
from zero_memory.domain.memory import InvalidationReason
from zero_memory.domain.records import DisputeStatus, RunStatus, pair_key
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.ports.review import DisputeQuery

CALL_TIMEOUT_S = 20
WRITERS = 4
JUDGE_MODEL = "judge-strong"

# Words for contents no two of which are near each other (nor refine each other in one session).
_WORD_LIST = (
    "alpha anchor archive badge beacon binary bridge buffer cable cache canvas carbon cedar channel cipher "
    "cobalt comet copper crystal dagger delta desert dolphin drift eagle ember engine falcon fern fiber "
    "flint forest fossil galaxy garnet glacier granite harbor hazel helix heron island ivory jasper jungle "
    "kernel kettle lantern laser lemon lotus magnet maple marble meadow meteor mirror nebula nickel oasis "
    "onyx orbit oxide panda pepper pixel planet plasma prism pulse quartz quiver radar raven reef rocket "
    "saddle saffron salmon sensor shadow signal silver socket spiral spruce squid static summit tango "
    "thistle thunder timber tunnel turbine velvet vertex violet walnut willow wizard yarrow zephyr zinc"
)
WORDS = _WORD_LIST.split()


def sentence(rng: random.Random, words: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


# -- the write burst -----------------------------------------------------------------------------------


@dataclass
class BurstLog:
    """What the writers sent and what the server acknowledged before it died."""

    tag: str
    sent: set[str] = field(default_factory=set)
    acked: dict[str, str] = field(default_factory=dict)  # memory id -> content
    in_flight_at_kill: int = 0
    landed_unacknowledged: int = 0  # sent, committed, never acknowledged: the kill fell after the commit

    def unacknowledged(self) -> set[str]:
        return self.sent - set(self.acked.values())


async def _writer(service: Service, log: BurstLog, writer: int, seed: int, user: str) -> None:
    rng = random.Random(seed)
    try:
        async with connect(service.deployment, "http", "auto", user=user, client_name=f"burst-{writer}") as client:
            for n in range(1_000_000):
                content = f"{log.tag} w{writer} n{n}: {sentence(rng)}"
                log.sent.add(content)
                with anyio.fail_after(CALL_TIMEOUT_S):
                    result = await client.call_tool(
                        "remember", {"content": content, "kind": "fact", "scope": "personal"}
                    )
                assert not result.is_error and result.structured_content is not None, result
                assert result.structured_content["status"] == "created", result.structured_content
                log.acked[result.structured_content["id"]] = content
    except Exception:
        # The server died under the call: what was not acknowledged may or may not have landed.
        return


async def burst_until_killed(
    service: Service, *, kill_after: int, writers: int = WRITERS, user: str = "alice", seed: int = 0
) -> BurstLog:
    """Write from ``writers`` clients at once; SIGKILL the server after ``kill_after`` acknowledgements."""
    log = BurstLog(tag=f"burst-{uuid.uuid4().hex[:8]}")
    async with anyio.create_task_group() as tasks:
        for writer in range(writers):
            tasks.start_soon(_writer, service, log, writer, seed * 1000 + writer, user)
        with anyio.fail_after(120):
            while len(log.acked) < kill_after:
                await anyio.sleep(0.005)
        log.in_flight_at_kill = len(log.sent) - len(log.acked)
        service.kill()
    return log


def check_burst(service: Service, log: BurstLog, *, user: str = "alice") -> None:
    """After a restart: every acknowledged write whole, live and readable; nothing unsent, nothing twice."""
    with service.store() as store:
        assert_consistent(store)
        with system_tx(store, "test") as tx:
            found = [m for m in tx.iter_memories() if m.content.startswith(log.tag + " ")]
            acked = tx.get_memories(list(log.acked), SYSTEM)
    for memory_id, content in log.acked.items():
        memory = acked.get(memory_id)
        assert memory is not None, f"acknowledged write {memory_id} is lost"
        assert memory.content == content and memory.live, memory
    contents = [m.content for m in found]
    assert len(contents) == len(set(contents)), "a write landed twice"
    assert set(contents) <= log.sent, "a memory nobody sent"
    log.landed_unacknowledged = len(set(contents) - set(log.acked.values()))
    aio.run(_read_back, service, log, user)


async def _read_back(service: Service, log: BurstLog, user: str) -> None:
    async with connect(service.deployment, "http", "auto", user=user, client_name="burst-check") as client:
        for memory_id, content in log.acked.items():
            got = await call_ok(client, "get_memory", {"id": memory_id})
            assert got["memory"]["content"] == content
        after = await call_ok(
            client, "remember", {"content": f"{log.tag} after restart", "kind": "fact", "scope": "personal"}
        )
        assert after["status"] == "created"


def write_burst_cycle(service: Service, *, kill_after: int = 24, seed: int = 0) -> BurstLog:
    """One burst, one SIGKILL, one restart, every check. The service must be running; it is left running."""
    log = aio.run(lambda: burst_until_killed(service, kill_after=kill_after, seed=seed))
    service.start()
    check_burst(service, log)
    return log


# -- the hygiene run -------------------------------------------------------------------------------------

# Pairs the bundled model finds similar (0.76 to 0.97) and unlike each other (below the sweep floor):
# the calibrated pairs of tests/hygiene/pipeline.py, with the judge's answer for each.
TOPICS: list[tuple[str, str, str, float]] = [
    ("The staging database is green", "The staging database is blue", "contradiction", 0.92),
    ("The api listens on port 8080", "The api listens on port 9090", "duplicate", 0.97),
    (
        "Deploys go through the release pipeline on Fridays",
        "Deploys go through the release pipeline on Mondays",
        "b_supersedes_a",
        0.97,
    ),
    ("The web app is built with React 18", "The web app is built with React 19", "duplicate", 0.97),
    ("Alice prefers tabs for indentation", "Alice prefers spaces for indentation", "contradiction", 0.95),
    ("Our CI runner uses Ubuntu 22.04", "Our CI runner uses Ubuntu 24.04", "duplicate", 0.97),
]


class SlowJudge:
    """The fake judge's answers: by topic, each held back ``delay_s``; ``unrelated`` across topics.

    Records, per phase, the pairs (by their two texts) it was asked about, and
    lets a test wait for the n-th question of a phase.
    """

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.phase = 0
        self.asked: dict[int, list[frozenset[str]]] = {}
        self._changed = threading.Condition()
        self._texts = {text for a, b, _, _ in TOPICS for text in (a, b)}

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.body["response_format"]["json_schema"]["name"] == "portability_verdict":
            return FakeOpenAIServer.portability(False, 0.9, "Project-specific.").delayed(self.delay_s)
        message = FakeOpenAIServer.user_message(request)
        pair = frozenset(text for text in self._texts if f"<content>\n{text}\n</content>" in message)
        with self._changed:
            self.asked.setdefault(self.phase, []).append(pair)
            self._changed.notify_all()
        for a, b, verdict, confidence in TOPICS:
            if pair == {a, b}:
                return FakeOpenAIServer.verdict(verdict, confidence, f"scripted: {verdict}").delayed(self.delay_s)
        return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.").delayed(self.delay_s)

    def wait_for(self, count: int, timeout_s: float = 60) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.asked.get(self.phase, [])) >= count, timeout_s), (
                f"the judge was asked {len(self.asked.get(self.phase, []))} times, expected {count}"
            )


def judge_env(fake: FakeOpenAIServer) -> dict[str, str]:
    return {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": fake.base_url,
        "ZM_JUDGE_API_KEY": "test-key",
        "ZM_HYGIENE_MODEL": JUDGE_MODEL,
        "ZM_JUDGE_TIMEOUT_S": "30",
    }


@dataclass
class HygieneCrash:
    ids: dict[str, str]  # content -> memory id
    killed_run: str
    asked_before: list[frozenset[str]]
    asked_after: list[frozenset[str]]
    summary: dict[str, Any]


async def _call(service: Service, user: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with connect(service.deployment, "http", "auto", user=user, client_name="crash-hygiene") as client:
        return await call_ok(client, tool, arguments)


async def _seed(client: Client) -> dict[str, str]:
    ids = {}
    for a, b, _, _ in TOPICS:
        for text in (a, b):
            # A session of its own per write: two writes of one session this close would refine each other.
            written = await call_ok(
                client,
                "remember",
                {"content": text, "kind": "fact", "scope": "personal", "session_id": f"seed-{uuid.uuid4().hex}"},
            )
            assert written["status"] == "created", written
            ids[text] = written["id"]
    return ids


def seed_topics(service: Service, user: str = "alice") -> dict[str, str]:
    async def seed() -> dict[str, str]:
        async with connect(service.deployment, "http", "auto", user=user, client_name="crash-seed") as client:
            return await _seed(client)

    return aio.run(seed)


def hygiene_cycle(service: Service, judge: SlowJudge, *, kill_at: int = 3, user: str = "alice") -> HygieneCrash:
    """Seed the topics, start a run, SIGKILL it at the judge's ``kill_at``-th question, restart, check, finish.

    The service must be running with ``judge`` behind its judge URL and hold
    none of the topics' texts for ``user`` yet; it is left running.
    """
    ids = seed_topics(service, user)
    judge.asked.clear()
    judge.phase = 1
    started = aio.run(_call, service, user, "scan_hygiene", {"wait": False})
    judge.wait_for(kill_at)
    # The kill_at-th answer is held back: the earlier ones were acted on, this one never will be.
    service.kill()
    asked_before = list(judge.asked[1])
    judge.phase = 2
    service.start()

    with service.store() as store:
        assert_consistent(store)
        with system_tx(store, "test") as tx:
            run = tx.get_run(started["run_id"])
            assert run is not None and run.status is RunStatus.INTERRUPTED, run
            committed = {pair for pair in _all_pairs(ids) if tx.get_judgement(_key(ids, pair), JUDGE_MODEL)}
    # Everything answered before the kill was committed with its action; the question in flight was not.
    assert committed == set(asked_before[: kill_at - 1]), (committed, asked_before)

    summary = aio.run(_call, service, user, "scan_hygiene", {"wait": True})
    assert summary["status"] == "completed" and summary["failed_judgements"] == 0, summary
    asked_after = list(judge.asked.get(2, []))
    assert not committed & set(asked_after), "a pair judged before the crash was judged again"
    assert len(asked_after) == len(set(asked_after)), "a pair judged twice in one run"
    topic_pairs = {frozenset((a, b)) for a, b, _, _ in TOPICS}
    assert topic_pairs <= committed | set(asked_after), "a pair was never judged"
    check_topics(service, ids)

    # The work is done: one more run finds nothing to judge.
    judge.phase = 3
    again = aio.run(_call, service, user, "scan_hygiene", {"wait": True})
    assert (again["judged"], again["auto_resolved"], again["queued"]) == (0, 0, 0), again
    return HygieneCrash(ids, started["run_id"], asked_before, asked_after, summary)


def check_topics(service: Service, ids: dict[str, str]) -> None:
    """The state one uninterrupted run reaches: each outcome applied exactly once."""
    with service.store() as store:
        assert_consistent(store)
        with system_tx(store, "test") as tx:
            memories = tx.get_memories(list(ids.values()), SYSTEM)
            ours = set(ids.values())
            resolutions = [e for e in tx.audit_actions("hygiene.auto_resolve") if set(e.memory_ids) <= ours]
            raised = [e for e in tx.audit_actions("queue.raise") if set(e.memory_ids) <= ours]
            rows = tx.list_disputes(DisputeQuery(owner=None, status=None, limit=10_000))
        for a, b, verdict, _ in TOPICS:
            old, new = memories[ids[a]], memories[ids[b]]
            key = pair_key(old.id, new.id)
            pair_rows = [d for d in rows if d.pair_key == key]
            actions = [e for e in resolutions if set(e.memory_ids) == {old.id, new.id}]
            if verdict == "contradiction":
                assert old.live and new.live, (a, b)
                assert len(pair_rows) == 1 and pair_rows[0].status is DisputeStatus.PENDING, pair_rows
                assert len([e for e in raised if e.payload.get("dispute_id") == pair_rows[0].id]) == 1
                assert not actions
            else:
                reason = InvalidationReason.DUPLICATE if verdict == "duplicate" else InvalidationReason.SUPERSEDED
                assert new.live and not old.live, (a, b)
                assert (old.invalidated_reason, old.superseded_by) == (reason, new.id), old
                assert len(actions) == 1, f"{len(actions)} automatic actions on one pair"
                assert not pair_rows


def _all_pairs(ids: dict[str, str]) -> set[frozenset[str]]:
    texts = sorted(ids)
    return {frozenset((x, y)) for i, x in enumerate(texts) for y in texts[i + 1 :]}


def _key(ids: dict[str, str], pair: frozenset[str]) -> str:
    x, y = sorted(pair)
    return pair_key(ids[x], ids[y])


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    return work(), time.monotonic() - started
