"""A restored memory stays, through the official MCP client against ``zm serve`` on SQLite and PostgreSQL.

The judge behind the fake OpenAI-compatible server is adversarial: for every pair it says, confidently,
that the newer memory replaces the older. A superseded memory that was restored is still never retired
by it again: the pair is queued, and the row says which side was restored.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import Deployment, base_env, call_ok, connect, judge_env, serving, unique
from tests.pg import session_server

pytestmark = pytest.mark.anyio


def newer_always_wins(request: RecordedRequest) -> Reply:
    if request.body["response_format"]["json_schema"]["name"] == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    return FakeOpenAIServer.verdict("b_supersedes_a", 0.99, "Memory B replaces memory A.")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = tmp_path_factory.mktemp(f"zm-restored-{request.param}")
    with FakeOpenAIServer() as fake:
        fake.respond_with(newer_always_wins)
        env = {**base_env(home), **judge_env(fake.base_url)}
        url = None
        if request.param == "postgres":
            url = session_server().fresh_url()
            env["ZM_DATABASE_URL"] = url
        try:
            with serving(home, env) as deployment:
                yield deployment
        finally:
            if url is not None:
                session_server().drop(url)


async def test_a_restored_memory_is_queued_not_superseded_again(served: Deployment) -> None:
    tag = unique()
    async with connect(served, "http", "auto") as client:
        remember = {"kind": "fact", "scope": "personal"}
        a = await call_ok(client, "remember", {**remember, "content": f"The staging database is green {tag}"})
        b = await call_ok(
            client,
            "remember",
            {
                **remember,
                "content": f"The staging database is blue {tag}",
                "links": [{"type": "supersedes", "dst": a["id"]}],
            },
        )
        assert b["superseded"] == [a["id"]]
        assert not (await call_ok(client, "get_memory", {"id": a["id"]}))["memory"]["restored"]

        assert (await call_ok(client, "restore_memory", {"id": a["id"]}))["status"] == "live"
        shown = await call_ok(client, "get_memory", {"id": a["id"]})
        assert shown["memory"]["status"] == "live" and shown["memory"]["restored"] is True

        scan = await call_ok(client, "scan_hygiene", {"wait": True})
        assert scan["status"] == "completed"
        assert scan["auto_resolved"] == 0 and scan["queued"] == 1 and scan["failed_judgements"] == 0
        assert (await call_ok(client, "get_memory", {"id": a["id"]}))["memory"]["status"] == "live"

        queue = await call_ok(client, "list_conflicts", {})
        row = next(r for r in queue["conflicts"] if {r["memory_a"]["id"], r["memory_b"]["id"]} == {a["id"], b["id"]})
        assert (row["verdict"], row["direction"], row["status"]) == ("supersedes", "b_supersedes_a", "pending")
        sides = {row["memory_a"]["id"]: row["memory_a"], row["memory_b"]["id"]: row["memory_b"]}
        assert sides[a["id"]]["restored"] is True and sides[b["id"]]["restored"] is False

        again = await call_ok(client, "scan_hygiene", {"wait": True})
        assert again["auto_resolved"] == 0
        assert (await call_ok(client, "get_memory", {"id": a["id"]}))["memory"]["status"] == "live"


async def test_the_triage_prompt_reads_the_rule_from_the_row(served: Deployment) -> None:
    async with connect(served, "http", "auto") as client:
        prompt = await client.get_prompt("triage", {})
    text = "".join(getattr(m.content, "text", "") for m in prompt.messages)
    assert "restored: true" in text and "always kept" in text
