"""Same-session refinement is a run: an agent that remembers a fact twice in one MCP session retires the
first write in a run of kind ``refine``, which ``zm hygiene runs`` lists and ``zm hygiene undo RUN`` (the
installed binary, on the server's database) undoes."""

from __future__ import annotations

import json

import pytest

from tests.mcp.helpers import Deployment, call_ok, connect, unique, zm

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_refinement_is_a_run_that_zm_hygiene_undo_restores(http_server: Deployment) -> None:
    marker = unique()
    first, second = (f"The deploy script lives in scripts/deploy{end} {marker}" for end in (".sh", ".sh."))
    async with connect(http_server, "http", "legacy") as client:  # one connection: one transport session
        older = await call_ok(client, "remember", {"content": first, "kind": "fact", "scope": "personal"})
        newer = await call_ok(client, "remember", {"content": second, "kind": "fact", "scope": "personal"})
        assert newer["superseded"] == [older["id"]]
        shown = await call_ok(client, "get_memory", {"id": older["id"]})
    assert shown["memory"]["status"] == "invalidated" and shown["memory"]["superseded_by"] == newer["id"]
    (refined,) = [a for a in shown["audit"] if a["action"] == "refine"]
    run_id = refined["run_id"]
    assert run_id, "the refinement names its run"

    runs = json.loads(zm(http_server.env, "hygiene", "runs", "--json", "--limit", "200").stdout)
    (run,) = [r for r in runs if r["run_id"] == run_id]
    assert (run["kind"], run["owner"], run["status"], run["summary"]["auto_resolved"]) == (
        "refine",
        "alice",
        "completed",
        1,
    )

    undone = json.loads(zm(http_server.env, "hygiene", "undo", run_id, "--json").stdout)
    assert undone["restored"] == [older["id"]]
    async with connect(http_server, "http", "legacy") as client:
        back = (await call_ok(client, "get_memory", {"id": older["id"]}))["memory"]
    assert back["status"] == "live" and back["restored"] is True and back["superseded_by"] is None
