"""A memory other people can see is never taken from them by a portability proposal (hygiene spec §10).

alice's project with bob as a member is shared: the audit proposes none of its
memories, and a proposal filed while alice was alone is refused once bob has
joined, so bob keeps recalling it. A project of alice's alone is proposed and
approved as before. The official MCP client against ``zm serve``; the judge is
a fake OpenAI-compatible server that finds every memory portable; projects and
grants through the CLI, as their admin runs them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp.client.client import Client

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import (
    Deployment,
    base_env,
    call_error,
    call_ok,
    connect,
    judge_env,
    serving,
    unique,
    zm,
)

pytestmark = pytest.mark.anyio


def judge_answer(request: RecordedRequest) -> Reply:
    if FakeOpenAIServer.schema_name(request) == "portability_verdict":
        return FakeOpenAIServer.portability(True, 0.95, "True of the tool, not of one project.")
    return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = tmp_path_factory.mktemp("zm-portability-sharing")
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge_answer)
        env = {**base_env(home), **judge_env(fake.base_url)}
        with serving(home, env) as deployment:
            yield deployment


def project(served: Deployment, slug: str, *, writer: str | None = None) -> str:
    """alice's project ``slug``, with ``writer`` as a writer when given; its scope."""
    env = {**served.env, "ZM_USER": "alice"}
    zm(env, "project", "create", slug)
    scope = f"proj.alice.{slug}"
    if writer:
        zm(env, "project", "grant", scope, writer, "writer")
    return scope


async def gotcha(client: Client, text: str, scope: str) -> str:
    written = await call_ok(client, "remember", {"content": text, "kind": "gotcha", "scope": scope})
    return str(written["id"])


async def proposals(client: Client) -> dict[str, dict[str, object]]:
    """alice's proposals of every status, by memory id."""
    listed = (await call_ok(client, "list_portability", {"status": None}))["proposals"]
    return {p["memory"]["id"]: p for p in listed}


async def recalled_by(client: Client, text: str) -> list[str]:
    hits = (await call_ok(client, "recall", {"query": text, "scopes": ["*"], "limit": 20}))["hits"]
    return [h["id"] for h in hits]


async def test_a_memory_of_a_project_with_other_members_is_never_proposed(served: Deployment) -> None:
    shared = project(served, "shared-tools", writer="bob")
    alone = project(served, "own-tools")
    async with connect(served, "http", "auto") as alice, connect(served, "http", "auto", user="bob") as bob:
        seen_by_bob = unique("ripgrep skips .gitignored files unless given -u")
        in_shared = await gotcha(alice, seen_by_bob, shared)
        in_own = await gotcha(alice, unique("jq -r prints strings without their quotes"), alone)
        scan = await call_ok(alice, "scan_hygiene", {"wait": True})
        assert scan["portability_proposed"] == 1
        proposed = await proposals(alice)
        assert in_shared not in proposed
        assert proposed[in_own]["status"] == "pending"
        assert in_shared in await recalled_by(bob, seen_by_bob)

        # Alone in her project, alice approves as before: the memory moves to her core.
        approved = await call_ok(
            alice, "resolve_portability", {"candidate_id": proposed[in_own]["id"], "approve": True}
        )
        assert (approved["status"], approved["scope"]) == ("approved", "user.alice.core")
        assert (await call_ok(alice, "get_memory", {"id": in_own}))["memory"]["scope"] == "user.alice.core"


async def test_an_approval_is_refused_once_someone_else_can_see_the_memory_and_bob_keeps_it(
    served: Deployment,
) -> None:
    scope = project(served, "later-shared")
    async with connect(served, "http", "auto") as alice:
        text = unique("git worktree add refuses a branch checked out elsewhere")
        memory_id = await gotcha(alice, text, scope)
        await call_ok(alice, "scan_hygiene", {"wait": True})
        proposal = (await proposals(alice))[memory_id]
        assert proposal["status"] == "pending"

    zm({**served.env, "ZM_USER": "alice"}, "project", "grant", scope, "bob", "writer")
    async with connect(served, "http", "auto") as alice, connect(served, "http", "auto", user="bob") as bob:
        assert memory_id in await recalled_by(bob, text)
        refused = await call_error(alice, "resolve_portability", {"candidate_id": proposal["id"], "approve": True})
        assert refused.startswith("conflict: ") and scope in refused and "other members" in refused
        assert "bob" not in refused  # who else reads the project is not the refusal's to say

        # Nothing moved, the proposal still waits for alice, and bob still recalls the memory.
        assert (await call_ok(alice, "get_memory", {"id": memory_id}))["memory"]["scope"] == scope
        assert (await proposals(alice))[memory_id]["status"] == "pending"
        assert memory_id in await recalled_by(bob, text)

        dismissed = await call_ok(alice, "resolve_portability", {"candidate_id": proposal["id"], "approve": False})
        assert (dismissed["status"], dismissed["scope"]) == ("dismissed", scope)
