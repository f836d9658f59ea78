"""Write-triggered scans are runs: with ``ZM_HYGIENE_ON_WRITE=1`` a ``zm remember`` whose memory replaces
an older one (the judge behind a fake OpenAI-compatible server on 127.0.0.1 says so) resolves the pair in a
run of kind ``on_write``; ``zm hygiene runs`` lists it, the resolution's audit row names it, and the real
``zm hygiene undo RUN`` binary restores what it invalidated."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli.harness import Result, Zm
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

OLD = "The staging database is green"
NEW = "The staging database is blue"


def judge(request: RecordedRequest) -> Reply:
    if request.body["response_format"]["json_schema"]["name"] == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    return FakeOpenAIServer.verdict("b_supersedes_a", 0.99, "Memory B replaces memory A.")


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        yield {
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": fake.base_url,
            "ZM_JUDGE_API_KEY": "test-key",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_JUDGE_TIMEOUT_S": "10",
            "ZM_HYGIENE_ON_WRITE": "1",
        }


def ok(done: Result) -> Result:
    assert done.exit_code == 0, done.stderr
    return done


def test_an_on_write_run_is_listed_and_undone_by_zm_hygiene_undo(zm: Zm, zm_binary: Zm, env: dict[str, str]) -> None:
    old = ok(zm("remember", OLD, "--kind", "fact", "--project", "/srv/db", "--json", env=env)).json()["id"]
    new = ok(zm("remember", NEW, "--kind", "fact", "--project", "/srv/db", "--json", env=env)).json()["id"]
    shown = ok(zm("get", old, "--json", env=env)).json()
    assert shown["memory"]["status"] == "invalidated" and shown["memory"]["superseded_by"] == new
    (resolved,) = [a for a in shown["audit"] if a["action"] == "hygiene.auto_resolve"]
    run_id = resolved["run_id"]
    runs = ok(zm("hygiene", "runs", "--json", env=env)).json()
    assert [(r["kind"], r["status"]) for r in runs if r["run_id"] == run_id] == [("on_write", "completed")]

    undone = ok(zm_binary("hygiene", "undo", run_id, "--json", env=env)).json()
    assert undone["restored"] == [old]
    back = ok(zm("get", old, "--json", env=env)).json()["memory"]
    assert back["status"] == "live" and back["restored"] is True
