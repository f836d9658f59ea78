"""A second client: the TypeScript MCP SDK drives ``zm mcp`` over stdio and ``zm serve`` over HTTP.

The test installs the SDK into tests/js with npm when tests/js/node_modules is
missing, and is skipped only when ``node`` is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.helpers import ZM, Deployment, unique
from tests.npm_lock import installing

pytestmark = pytest.mark.slow

JS_DIR = Path(__file__).resolve().parents[1] / "js"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    with installing(JS_DIR):
        if not (JS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
            npm = shutil.which("npm")
            assert npm is not None, "node is installed but npm is not: install npm to run the TypeScript client test"
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=JS_DIR, check=True, timeout=300
            )
    return found


def run_client(node: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([node, "client.mjs"], cwd=JS_DIR, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_lists_remembers_recalls_and_is_refused(
    node: str, http_server: Deployment, transport: str
) -> None:
    # Over stdio twice: a start that finds no catalogue waits for the server and records one, so the second
    # at the latest answers the handshake and tools/list from it while the server is built (stdio_front.py).
    for _ in range(2 if transport == "stdio" else 1):
        check_report(node, http_server, transport)


def check_report(node: str, http_server: Deployment, transport: str) -> None:
    tag = unique().strip("[]")
    env = {**http_server.env, "ZM_JS_TRANSPORT": transport, "ZM_JS_TAG": tag}
    if transport == "stdio":
        env |= {"ZM_BIN": ZM, "ZM_USER": "alice", "ZM_JS_CWD": str(http_server.home)}
    else:
        env |= {"ZM_JS_URL": f"{http_server.url}/mcp", "ZM_JS_TOKEN": http_server.tokens["alice"]}
    report = run_client(node, env)

    assert report["server"]["name"] == "zero-memory"
    assert {
        "remember",
        "recall",
        "get_memory",
        "forget",
        "restore_memory",
        "close_loop",
        "move_memories",
        "link",
        "build_context",
    } <= set(report["tools"])
    assert report["recallAnnotations"]["readOnlyHint"] is False and report["recallHasOutputSchema"] is True
    written = report["remember"]
    assert not written["isError"] and written["structured"]["status"] == "created"
    assert written["structured"]["scope"] == "user.alice"
    assert written["text"].startswith(f"created {written['structured']['id']}")
    assert written["structured"]["id"] in report["recall"]["ids"]
    assert f"zm://memory/{written['structured']['id']}" in report["recall"]["links"]
    assert report["resource"] == "ts-sdk-test"
    built = report["buildContext"]
    briefing = built["structured"]
    assert not built["isError"]
    assert {"rules", "open_loops", "memories", "pending_reviews", "project", "session"} <= set(briefing)
    assert briefing["session"]["attached_project"] == briefing["project"] and briefing["project"].startswith(
        "proj.alice."
    )
    assert built["taskId"] in [item["id"] for item in briefing["open_loops"]["items"]]
    assert written["structured"]["id"] in [item["id"] for item in briefing["memories"]["items"]]
    scopes = {i["scope"] for name in ("rules", "open_loops", "memories") for i in briefing[name]["items"]}
    assert all(s == "user.alice" or s.startswith(("user.alice.", "proj.alice.")) for s in scopes)
    assert len(built["text"]) <= briefing["budget_chars"] and "## Open loops" in built["text"]
    refusals = report["refusals"]
    assert refusals["unknown_argument"] == {"isError": True, "text": "validation_failed: bogus: unknown argument"}
    assert refusals["wrong_type"]["text"] == "validation_failed: limit: Input should be a valid integer"
    assert refusals["unknown_kind"]["text"].startswith("validation_failed: kind:")
    assert refusals["not_found"]["text"] == "not_found: no memory mem_01zzzzzzzzzzzzzzzzzzzzzzzz"
