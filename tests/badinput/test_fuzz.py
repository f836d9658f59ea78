"""Fuzzing the tool layer: whatever arguments arrive, every tool answers with a stable code, never a crash.

Hypothesis sends every tool JSON-ish argument objects — its own field names
and random ones, nested values, wrong types, huge strings, NUL, lone
surrogates, right-to-left marks, 4-byte emoji, real ids and ids of nobody —
in process through ``tooling.invoke`` (the function every transport calls),
on SQLite and on PostgreSQL. Every answer is a result with structured
content or an error starting with a stable code other than ``internal:``,
and afterwards a normal call still works.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from tests.badinput.conftest import Seed
from tests.badinput.table import EMOJI, GITHUB_TOKEN, NUL, ROWS, RTL, SURROGATE, has_surrogate, resolve
from tests.pg import PgServer, pg_server  # noqa: F401  (fixture)
from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.server import ZMServer, build_server
from zero_memory.mcp.tooling import ToolSpec, invoke
from zero_memory.settings import Settings
from zero_memory.store import system_tx

STABLE = re.compile(r"(validation_failed|not_found|conflict|unavailable): \S")
ALICE = Caller("alice", client="fuzz", session_id="fuzz-session")


class Fuzzed:
    """An app with alice and bob, a few memories and queue rows, and the server over it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.server: ZMServer = build_server(app, Identity(local_uid="alice"))
        self.ids: list[str] = []
        self.seeded: dict[str, str] = {}
        # An event loop of its own: the MCP tests' session fixtures may keep one running on this thread.
        self.loop = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fuzz-loop")

    def call(self, tool: str, arguments: Any) -> CallToolResult:
        spec: ToolSpec[Any, Any] = self.server.specs[tool]
        return self.loop.submit(anyio.run, invoke, spec, arguments, self.app, lambda: ALICE).result()

    def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.call(tool, arguments)
        assert not result.is_error, text(result)
        assert result.structured_content is not None
        return result.structured_content


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fuzzed(request: pytest.FixtureRequest) -> Iterator[Fuzzed]:
    environ = {"ZM_HOME": tempfile.mkdtemp(prefix="zm-fuzz-")}
    if request.param == "postgres":
        server: PgServer = request.getfixturevalue("pg_server")
        environ["ZM_DATABASE_URL"] = server.fresh_url()
    app = build_app(Settings.from_environ(environ), embedder=HashingEmbedder())
    with system_tx(app.store, "test", write=True) as tx:
        users.add_user(tx, "alice", is_local=True)
        users.add_user(tx, "bob")
    fuzzed = Fuzzed(app)
    for content, kind in [
        ("The staging database is green", "fact"),
        ("The staging database is blue", "fact"),
        ("Renew the certificate", "task"),
    ]:
        fuzzed.ids.append(fuzzed.ok("remember", {"content": content, "kind": kind, "scope": "personal"})["id"])
    fuzzed.ok("scan_hygiene", {"wait": True})
    fuzzed.ids += [row["id"] for row in fuzzed.ok("list_conflicts", {"limit": 100})["conflicts"]]
    fuzzed.ids.append(fuzzed.ok("challenge", {"memory_id": fuzzed.ids[0], "reason": "It moved"})["dispute_id"])
    fuzzed.seeded = {"memory": fuzzed.ids[0], "other": fuzzed.ids[1], "task": fuzzed.ids[2], "dispute": fuzzed.ids[-1]}
    yield fuzzed
    fuzzed.loop.shutdown()
    app.close()


# -- strategies --------------------------------------------------------------------------------------------

SPECIAL = [
    NUL,
    SURROGATE,
    "\udfff",
    RTL,
    "\u200f",
    EMOJI,
    "\ufeff",
    "\uffff",
    "",
    " ",
    "*",
    "core",
    "personal",
    "user.bob",
    "user.alice.core",
    "proj.x",
    "fact",
    "supersedes",
    "duplicate",
    "newest_wins",
    f"token {GITHUB_TOKEN}",
    "mem_01zzzzzzzzzzzzzzzzzzzzzzzz",
    "dsp_01zzzzzzzzzzzzzzzzzzzzzzzz",
    "/work/src/app",
    "https://u:p4ssw0rd-long@example.com/x",
]
HUGE = st.sampled_from([4_001, 16_001, 100_000]).map(lambda n: "y" * n)
# The characters no store takes, alone or around a real-looking value.
NASTY = st.builds(
    lambda c, at: [c, f"mem_{c}", f"{c}dsp_01", c * 3][at],
    st.sampled_from([NUL, SURROGATE, "\udc80"]),
    st.integers(0, 3),
)
TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=()), max_size=40),  # every code point, surrogates included
    st.sampled_from(SPECIAL),
    HUGE,
    st.builds(lambda a, b: a + b, st.sampled_from(SPECIAL), st.text(max_size=10)),
)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)
# One well-formed call per tool; "@memory", "@other", "@task" and "@dispute" are seeded ids.
VALID: dict[str, dict[str, Any]] = {
    "remember": {"content": "A fuzzed note", "kind": "fact", "scope": "personal", "session_id": "fuzz"},
    "recall": {"query": "staging database", "scopes": ["*"], "limit": 5},
    "get_memory": {"id": "@memory"},
    "forget": {"id": "@memory", "reason": "outdated"},
    "restore_memory": {"id": "@memory"},
    "close_loop": {"id": "@task", "note": "done"},
    "build_context": {"topic": "release checklist", "project_hint": "/srv/fuzz", "limit": 5},
    "move_memories": {"ids": ["@memory"], "scope": "personal"},
    "link": {"src": "@memory", "dst": "@other", "type": "relates_to"},
    "challenge": {"memory_id": "@memory", "reason": "It moved"},
    "scan_hygiene": {"dry_run": True, "wait": True},
    "list_conflicts": {"status": "pending", "limit": 5},
    "get_conflict": {"id": "@dispute"},
    "resolve_conflict": {"dispute_id": "@dispute", "keep_both": True},
    "resolve_conflicts": {"resolutions": [{"dispute_id": "@dispute"}]},
    "list_portability": {"status": "pending"},
    "resolve_portability": {"candidate_id": "prt_01zzzzzzzzzzzzzzzzzzzzzzzz", "approve": False},
    "ingest_conversation": {"transcript_chunk": "user: how do we deploy?\n", "conversation_id": "fuzz"},
}


def valid_call(tool: str, seeded: dict[str, str]) -> dict[str, Any]:
    def fill(value: Any) -> Any:
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return seeded.get(value[1:], value) if isinstance(value, str) and value.startswith("@") else value

    filled: dict[str, Any] = fill(VALID[tool])
    return filled


@st.composite
def calls(draw: st.DrawFn, seeded: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """A random argument object for a random tool, or one of its valid calls with a field or two made bad."""
    tool = draw(st.sampled_from(sorted(VALID)))
    valid = valid_call(tool, seeded)
    ids = sorted(seeded.values())
    key = st.one_of(st.sampled_from(sorted(valid)), TEXT)
    value = st.one_of(
        JSON, TEXT, NASTY, st.sampled_from(ids), st.lists(st.one_of(st.sampled_from(ids), NASTY), max_size=3)
    )
    if draw(st.integers(0, 3)) == 0:
        return tool, draw(st.dictionaries(key, value, max_size=6))
    arguments = dict(valid)
    for name in draw(st.lists(st.sampled_from(sorted(valid)), min_size=1, max_size=2, unique=True)):
        arguments[name] = draw(value)
    if draw(st.integers(0, 4)) == 0:
        arguments.update(draw(st.dictionaries(key, value, max_size=2)))
    return tool, arguments


def test_the_fuzz_reaches_every_tool() -> None:
    from zero_memory.mcp.server import tool_modules

    assert set(VALID) == {spec.name for module in tool_modules() for spec in module.toolset.specs}


@pytest.mark.slow
def test_any_arguments_get_a_stable_answer_and_never_a_crash(fuzzed: Fuzzed) -> None:
    @settings(
        max_examples=600,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(call=calls(fuzzed.seeded))
    def check(call: tuple[str, dict[str, Any]]) -> None:
        tool, arguments = call
        result = fuzzed.call(tool, arguments)
        if result.is_error:
            assert STABLE.match(text(result)), f"{tool} {arguments!r:.300} -> {text(result)[:300]}"
            assert result.structured_content is None
        else:
            assert result.structured_content is not None, tool

    check()
    fuzzed.app.wait_idle()
    fuzzed.ok("recall", {"query": "staging database", "scopes": ["*"]})
    assert fuzzed.ok("get_memory", {"id": fuzzed.seeded["other"]})["memory"]["id"] == fuzzed.seeded["other"], (
        "normal calls still work after the fuzz"
    )


@pytest.mark.parametrize("key", [key for key, row in ROWS.items() if has_surrogate(row.arguments)])
def test_in_process_a_lone_surrogate_is_refused_by_field(fuzzed: Fuzzed, key: str) -> None:
    """Over HTTP and stdio the SDK's JSON parser refuses a lone surrogate first; in process the tool layer does."""
    row = ROWS[key]
    seed = Seed(**{name: fuzzed.ids[0] for name in Seed.__dataclass_fields__ if not name.startswith("missing")})
    result = fuzzed.call(row.tool, resolve(row.arguments, seed))
    assert result.is_error and text(result).startswith(row.expected), text(result)


@pytest.mark.parametrize("memory_id", ["\x00", "a\x00b", "%00", "x" * 5_000, EMOJI, RTL, "../mem_x", "mem_01zzzz"])
def test_the_memory_resource_answers_a_bad_id_as_unknown_never_as_a_crash(fuzzed: Fuzzed, memory_id: str) -> None:
    async def read() -> str:
        async with Client(fuzzed.server) as client:
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"zm://memory/{memory_id}")
        return refused.value.error.message

    message = fuzzed.loop.submit(anyio.run, read).result()
    assert message.startswith(("not_found:", "Unknown resource:")), message
    assert not message.startswith("internal")
