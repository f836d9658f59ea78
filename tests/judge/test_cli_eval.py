"""``zm judge eval``: the configured judge over labelled pairs, reported as a person reads it.

Against the fake OpenAI server (the real SDK, over HTTP), the server answering
each pair from its content so that the report has right answers, a false
supersede, a reversed one and a failure in it; against a FakeJudge for the
human-readable report. ``zm`` runs in process (tests/cli/harness.py) but where
only the real binary shows it: no key in anything it prints, the progress bar
on a terminal.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.harness import ZM, Result, environ, run
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from tests.judge.conftest import SERVER_KEY, STRONG
from zero_memory.cli import judge as judge_cli
from zero_memory.judge.fake import FAKE_RATIONALE, FakeJudge
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.settings import Settings

# id: (label, what the judge answers: a verdict, or None for a malformed reply)
SCRIPT: dict[str, tuple[str, str | None]] = {
    "dup-1": ("duplicate", "duplicate"),
    "compl-1": ("complementary", "a_supersedes_b"),  # a false supersede: it would retire a keeper
    "unrel-1": ("unrelated", "unrelated"),
    "sup-1": ("b_supersedes_a", "a_supersedes_b"),  # reversed
    "contra-1": ("contradiction", "contradiction"),
    "unrel-2": ("unrelated", None),  # malformed
}
IDS = list(SCRIPT)


def pairs_file(tmp_path: Path, ids: list[str] = IDS) -> Path:
    lines = ["// a comment line, then a blank one", ""]
    for pair_id in ids:
        label = SCRIPT[pair_id][0]
        row = {
            "id": pair_id,
            "tags": ["scripted", pair_id.split("-")[0]],
            "a": {"kind": "fact", "age_days": 30, "content": f"[{pair_id}] The API listens on port 8080."},
            "b": {"kind": "fact", "age_days": 2, "content": f"[{pair_id}] The API listens on port 9090."},
            "label": label,
        }
        lines.append(json.dumps(row))
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def answer_from_content(request: RecordedRequest) -> Reply:
    """Answer each pair as SCRIPT says; tokens tell the pairs apart (100 + n in, 10 + n out)."""
    pair_id = re.findall(r"\[([a-z]+-\d)\]", FakeOpenAIServer.user_message(request))[0]
    n = IDS.index(pair_id) + 1
    verdict = SCRIPT[pair_id][1]
    if verdict is None:
        return FakeOpenAIServer.completion(
            "Sure! The verdict is duplicate.", prompt_tokens=100 + n, completion_tokens=10 + n
        )
    return FakeOpenAIServer.verdict(
        verdict, 0.9, f"scripted {pair_id}", prompt_tokens=100 + n, completion_tokens=10 + n
    )


def zm(*args: str, env: dict[str, str], tmp_path: Path, binary: bool = False) -> Result:
    return run(args, env={"ZM_HOME": str(tmp_path / "zm-home"), "COLUMNS": "200", **env}, binary=binary)


def openai_env(server: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    return {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": server.base_url,
        "ZM_JUDGE_API_KEY": SERVER_KEY,
        "ZM_HYGIENE_MODEL": STRONG,
        "ZM_JUDGE_TIMEOUT_S": "5",
        **extra,
    }


# -- over HTTP, against the fake OpenAI server ------------------------------------


def test_the_json_report_says_what_the_provider_answered(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.respond_with(answer_from_content)
    done = zm("judge", "eval", str(pairs_file(tmp_path)), "--json", env=openai_env(openai_server), tmp_path=tmp_path)
    assert done.exit_code == 0, done.stderr
    assert done.stderr == ""  # no progress bar when stderr is not a terminal
    report: dict[str, Any] = json.loads(done.stdout)

    assert (report["provider"], report["model"], report["pairs"]) == ("openai", STRONG, 6)
    assert report["accuracy"] == pytest.approx(3 / 6)
    assert report["false_supersedes"] == 1
    assert report["false_supersede_rate"] == pytest.approx(1 / 3)  # of the three pairs to keep
    assert report["reversed_supersedes"] == 1
    assert report["failures"] == {"malformed": 1}
    assert report["failure_rate"] == pytest.approx(1 / 6)
    assert report["confusion"]["complementary"]["a_supersedes_b"] == 1
    assert report["confusion"]["b_supersedes_a"]["a_supersedes_b"] == 1
    assert report["confusion"]["unrelated"] == {
        **dict.fromkeys(report["confusion"]["unrelated"], 0),
        "unrelated": 1,
        "failed": 1,
    }
    assert report["per_verdict"]["a_supersedes_b"] == {"support": 0, "predicted": 2, "precision": 0.0, "recall": None}
    assert report["per_verdict"]["duplicate"] == {"support": 1, "predicted": 1, "precision": 1.0, "recall": 1.0}
    assert report["per_verdict"]["unrelated"]["recall"] == pytest.approx(1 / 2)
    assert report["tokens"] == {"input": sum(100 + n for n in range(1, 7)), "output": sum(10 + n for n in range(1, 7))}
    assert report["estimated_cost_usd"] is None
    # The wrong supersedes lead the misjudged list.
    assert [m["id"] for m in report["misjudged"]] == ["compl-1", "sup-1", "unrel-2"]
    assert report["by_tag"]["scripted"] == {"correct": 3, "pairs": 6}

    assert len(openai_server.requests) == 6
    assert {r.api_key for r in openai_server.requests} == {SERVER_KEY}
    assert {r.body["model"] for r in openai_server.requests} == {STRONG}


def test_provisional_runs_on_the_fast_model(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.respond_with(answer_from_content)
    env = openai_env(openai_server, ZM_HYGIENE_FAST_MODEL="judge-fast-9")
    done = zm("judge", "eval", str(pairs_file(tmp_path)), "--json", "--provisional", env=env, tmp_path=tmp_path)
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["model"] == "judge-fast-9"
    assert {r.body["model"] for r in openai_server.requests} == {"judge-fast-9"}


def test_the_table_report_names_the_figures_that_matter(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.respond_with(answer_from_content)
    done = zm(
        "judge",
        "eval",
        str(pairs_file(tmp_path)),
        "--price-in",
        "2",
        "--price-out",
        "8",
        env=openai_env(openai_server),
        tmp_path=tmp_path,
    )
    assert done.exit_code == 0, done.stderr
    out = done.stdout
    for text in (
        "Confusion",
        "Per verdict",
        "accuracy 50%",
        "false supersedes 1",
        "reversed supersedes 1",
        "failures: malformed 1",
        "compl-1",
        "estimated cost: $0.0",
    ):
        assert text in out, text


def test_offer_mode_is_refused_with_what_to_set(tmp_path: Path) -> None:
    done = zm("judge", "eval", str(pairs_file(tmp_path)), env={"ZM_JUDGE_PROVIDER": "none"}, tmp_path=tmp_path)
    assert done.exit_code == 1
    assert done.stdout == ""
    assert done.stderr.startswith("validation_failed: zm judge eval needs a model")
    assert "ZM_JUDGE_PROVIDER" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_unreachable_provider_is_a_report_of_failures_not_a_crash(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        base_url = server.base_url  # a port nobody listens on once the server stops
    env = {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": base_url,
        "ZM_JUDGE_API_KEY": SERVER_KEY,
        "ZM_JUDGE_TIMEOUT_S": "2",
    }
    # The real binary: no log line or traceback of the SDK's may carry the key.
    done = zm(
        "judge",
        "eval",
        str(pairs_file(tmp_path, ["dup-1", "unrel-1"])),
        "--json",
        env=env,
        tmp_path=tmp_path,
        binary=True,
    )
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["failures"] == {"unavailable": 2}
    assert SERVER_KEY not in done.stdout + done.stderr


def test_a_bad_line_is_named(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"a": {"kind": "fact", "age_days": 1, "content": "x"}, "b": {"kind": "fact", '
        '"age_days": 1, "content": "y"}, "label": "Duplicate"}\n',
        encoding="utf-8",
    )
    done = zm("judge", "eval", str(path), env=openai_env(openai_server), tmp_path=tmp_path)
    assert done.exit_code == 1
    assert done.stderr.startswith("validation_failed: bad.jsonl:1: label")
    assert openai_server.requests == []


def test_a_missing_file_is_named(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    done = zm("judge", "eval", str(tmp_path / "nope.jsonl"), env=openai_env(openai_server), tmp_path=tmp_path)
    assert done.exit_code == 1
    assert done.stderr.startswith("validation_failed: cannot read")


# -- against a FakeJudge ----------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeJudge:
    """The CLI's judge replaced by a FakeJudge answering as SCRIPT says (malformed → a failure)."""
    from zero_memory.judge.base import FailureKind

    def answer(request: PairRequest) -> Any:
        verdict = SCRIPT[re.findall(r"\[([a-z]+-\d)\]", request.a.content)[0]][1]
        return FailureKind.MALFORMED if verdict is None else (verdict, 0.9)

    judge = FakeJudge(answer)
    built: list[Settings] = []

    def build(settings: Settings) -> FakeJudge:
        built.append(settings)
        return judge

    monkeypatch.setattr(judge_cli, "build_judge", build)
    return judge


def invoke(tmp_path: Path, *args: str) -> Result:
    return zm(*args, env={}, tmp_path=tmp_path)


def test_in_process_the_report_covers_every_pair_once(fake: FakeJudge, tmp_path: Path) -> None:
    result = invoke(
        tmp_path, "judge", "eval", str(pairs_file(tmp_path)), "--json", "--price-in", "2", "--price-out", "8"
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(fake.requests) == 6
    assert all(isinstance(r, PairRequest) and not r.provisional for r in fake.requests)
    assert (report["provider"], report["model"]) == ("fake", "fake-strong")
    assert report["false_supersedes"] == 1
    assert report["failures"] == {"malformed": 1}
    # FakeJudge bills 100 in and 20 out a call: 600 and 120 tokens at $2 and $8 a million.
    assert report["tokens"] == {"input": 600, "output": 120}
    assert report["estimated_cost_usd"] == pytest.approx((600 * 2 + 120 * 8) / 1e6)
    assert [m["detail"] for m in report["misjudged"]][:2] == [FAKE_RATIONALE, FAKE_RATIONALE]


def test_in_process_provisional_asks_the_fast_path(fake: FakeJudge, tmp_path: Path) -> None:
    result = invoke(tmp_path, "judge", "eval", str(pairs_file(tmp_path)), "--json", "--provisional")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["model"] == "fake-fast"
    assert all(isinstance(r, PairRequest) and r.provisional for r in fake.requests)


def test_in_process_the_tables_show_the_misjudged_pairs(fake: FakeJudge, tmp_path: Path) -> None:
    result = invoke(tmp_path, "judge", "eval", str(pairs_file(tmp_path)))
    assert result.exit_code == 0, result.stderr
    for text in ("fake · fake-strong · 6 pairs", "false supersedes 1", "Misjudged", "compl-1", "sup-1", "unrel-2"):
        assert text in result.stdout, text
    assert "estimated cost" not in result.stdout


def test_negative_prices_are_refused(fake: FakeJudge, tmp_path: Path) -> None:
    result = invoke(tmp_path, "judge", "eval", str(pairs_file(tmp_path)), "--price-in", "-1")
    assert result.exit_code == 2
    assert fake.requests == []


def test_every_judge_command_has_help(tmp_path: Path) -> None:
    for args in (["judge", "--help"], ["judge", "eval", "--help"]):
        result = invoke(tmp_path, *args)
        assert result.exit_code == 0
        assert "labelled pairs" in result.stdout.lower()


def test_a_progress_bar_is_drawn_on_a_terminal(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: the bar is drawn there, and stdout still carries only the JSON."""
    openai_server.respond_with(answer_from_content)
    env = environ({"ZM_HOME": str(tmp_path / "zm-home"), "TERM": "xterm", **openai_env(openai_server)})
    controller, terminal = pty.openpty()
    drawn = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    command = [str(ZM), "judge", "eval", str(pairs_file(tmp_path)), "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal, env=env, cwd=tmp_path) as child:
        os.close(terminal)
        out, _ = child.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(controller)
    assert child.returncode == 0
    assert json.loads(out)["pairs"] == 6
    assert b"judging with openai" in drawn
