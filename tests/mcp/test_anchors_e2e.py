"""Anchors through the official MCP client against ``zm serve``, on SQLite and PostgreSQL, with ``zm verify``
on the developer's side reporting over HTTP as a remote team member would: remember with anchors, the code
changes, verification raises an ``outdated`` row, recall and the briefing flag the memory, and the row is
settled: upholding re-anchors to the current code, retiring retires."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.helpers import ZM, Deployment, base_env, call_ok, connect, serving, unique, zm
from tests.pg import session_server
from tests.workspace.gitrepo import ENV as GIT_ENV
from tests.workspace.gitrepo import GitRepo

pytestmark = pytest.mark.anyio

CLIENT = """def retry(attempts):
    return min(2**attempts, 30)


def timeout():
    return 10
"""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = tmp_path_factory.mktemp(f"zm-anchors-{request.param}")
    env = {**base_env(home), "ZM_EMBEDDING_MODEL": "hash:512"}
    url = None
    if request.param == "postgres":
        url = session_server().fresh_url()
        env["ZM_DATABASE_URL"] = url
    try:
        with serving(home, env, ("alice",)) as deployment:
            yield deployment
    finally:
        if url is not None:
            session_server().drop(url)


def verify(served: Deployment, repo: GitRepo) -> dict[str, Any]:
    """``zm verify`` on the developer's machine: its own environment (no ZM_HOME of the server's), the
    server's URL and alice's token."""
    env = {**GIT_ENV, "PATH": served.env["PATH"], "HOME": str(repo.root.parent), "ZM_EMBEDDING_MODEL": "hash:512"}
    args = [ZM, "verify", str(repo.root), "--server", served.url, "--token", served.tokens["alice"], "--json"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


async def test_anchored_memories_follow_their_code_through_review(served: Deployment, tmp_path: Path) -> None:
    tag = unique()
    repo = GitRepo(tmp_path / f"api-{tag[-8:-1]}")
    repo.write("net/client.py", CLIENT)
    repo.commit("first")
    slug = f"api{tag[-8:-1]}"
    zm({**served.env, "ZM_USER": "alice"}, "project", "create", slug, "--path", str(repo.root))
    scope = f"proj.alice.{slug}"
    async with connect(served, "http", "auto") as client:
        upheld = await call_ok(
            client,
            "remember",
            {
                "content": f"retry backs off exponentially, capped at 30 s {tag}",
                "kind": "fact",
                "scope": scope,
                "anchors": [{"path": "net/client.py", "symbol": "retry"}],
            },
        )
        assert [(a["path"], a["symbol"], a["origin"], a["state"]) for a in upheld["anchors"]] == [
            ("net/client.py", "retry", "explicit", "verified")
        ]
        retired = await call_ok(
            client,
            "remember",
            {"content": f"`timeout()` in net/client.py is 10 s {tag}", "kind": "fact", "scope": scope},
        )
        assert [(a["symbol"], a["origin"]) for a in retired["anchors"]] == [("timeout", "automatic")]

        repo.write("net/client.py", CLIENT.replace("30)", "60)").replace("return 10", "return 20"))
        repo.commit("new limits")
        first = verify(served, repo)
        assert (first["anchors"], first["raised"]) == (2, 2)
        assert verify(served, repo)["raised"] == 0  # verifying twice raises nothing new

        hits = (await call_ok(client, "recall", {"query": f"retry backs off {tag}", "scopes": [scope]}))["hits"]
        flagged = {h["id"]: h["code_changed"] for h in hits}
        assert flagged[upheld["id"]] and flagged[retired["id"]]
        briefing = await call_ok(client, "build_context", {"project_hint": str(repo.root)})
        assert {i["id"] for i in briefing["code_changed"]["items"]} == {upheld["id"], retired["id"]}

        rows = (await call_ok(client, "list_conflicts", {"verdict": "outdated"}))["conflicts"]
        by_memory = {r["memory_a"]["id"]: r for r in rows}
        assert "+    return min(2**attempts, 60)" in by_memory[upheld["id"]]["reason"]

        await call_ok(client, "resolve_conflict", {"dispute_id": by_memory[upheld["id"]]["id"], "keep_both": True})
        kept = await call_ok(client, "get_memory", {"id": upheld["id"]})
        assert [(a["path"], a["state"], a["drift"]) for a in kept["anchors"]] == [("net/client.py", "verified", None)]
        await call_ok(client, "resolve_conflict", {"dispute_id": by_memory[retired["id"]]["id"], "retire": True})
        gone = await call_ok(client, "get_memory", {"id": retired["id"]})
        assert gone["memory"]["status"] == "invalidated"

        # Upheld against the code as it is: the next verification finds it unchanged and raises nothing.
        after = verify(served, repo)
        assert (after["anchors"], after["raised"]) == (1, 0)
        hits = (await call_ok(client, "recall", {"query": f"retry backs off {tag}", "scopes": [scope]}))["hits"]
        assert next(h for h in hits if h["id"] == upheld["id"])["code_changed"] is None
