"""`zm judge eval` without the CLI: load a labelled set, run a judge over it, report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply, Responder
from tests.judge.conftest import FAST, STRONG, Provider
from zero_memory import errors
from zero_memory.domain.verdicts import Verdict
from zero_memory.judge.base import FailureKind
from zero_memory.judge.evaluation import EvalReport, LabelledPair, load_pairs, run_eval
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.questions.pair import PairRequest

SHIPPED = Path(__file__).resolve().parents[2] / "evals" / "judge_pairs.jsonl"


def write_pairs(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def pair_line(label: str = "duplicate", a: str = "A text", b: str = "B text", **extra: object) -> str:
    row = {
        "a": {"kind": "fact", "age_days": 3, "content": a},
        "b": {"kind": "gotcha", "age_days": 1.5, "content": b},
        "label": label,
        **extra,
    }
    return json.dumps(row)


def oracle(pairs: list[LabelledPair]) -> dict[tuple[str, str], str]:
    """The right answer for each pair, found from the contents a judge is shown."""
    return {(p.a.content, p.b.content): str(p.label) for p in pairs}


# -- the labelled set we ship ---------------------------------------------------


def test_the_shipped_set_has_at_least_80_pairs_covering_every_verdict() -> None:
    pairs = load_pairs(SHIPPED)
    assert len(pairs) >= 80
    labels = Counter(p.label for p in pairs)
    assert all(labels[v] >= 8 for v in Verdict), labels


def test_the_shipped_set_covers_the_hard_cases() -> None:
    tags = Counter(tag for p in load_pairs(SHIPPED) for tag in p.tags)
    for tag in (
        "broad-vs-gotcha",
        "status-chain",
        "symptom-cause-fix",
        "same-topic-facets",
        "translated",
        "same-domain-unrelated",
        "coverage-trap",
    ):
        assert tags[tag] >= 2, tag


def test_the_shipped_set_balances_the_two_supersede_directions() -> None:
    labels = Counter(p.label for p in load_pairs(SHIPPED))
    assert abs(labels[Verdict.A_SUPERSEDES_B] - labels[Verdict.B_SUPERSEDES_A]) <= 2


# -- loading -----------------------------------------------------------------------


def test_a_labelled_file_loads_with_defaults_comments_and_blank_lines(tmp_path: Path) -> None:
    path = write_pairs(
        tmp_path,
        "// a comment",
        pair_line("duplicate", id="p1", tags=["x"], note="why"),
        "",
        pair_line("unrelated"),
    )
    first, second = load_pairs(path)
    assert (first.id, first.label, first.tags, first.note) == ("p1", Verdict.DUPLICATE, ("x",), "why")
    assert (first.a.kind, first.a.age_days, first.b.content) == ("fact", 3, "B text")
    assert second.id == "line-4"


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("{not json", "pairs.jsonl:1"),
        (pair_line("merge"), "label"),
        (pair_line("Duplicate"), "label"),
        (json.dumps({"a": {"kind": "fact", "age_days": 1, "content": "x"}, "label": "duplicate"}), "b"),
        (pair_line(b=""), "b.content"),
        (pair_line(surprise=1), "surprise"),
    ],
)
def test_a_bad_line_is_refused_with_its_place(tmp_path: Path, line: str, complaint: str) -> None:
    with pytest.raises(errors.ZMError) as caught:
        load_pairs(write_pairs(tmp_path, line))
    assert caught.value.code is errors.Code.VALIDATION_FAILED
    assert "pairs.jsonl:1" in str(caught.value)
    assert complaint in str(caught.value)


def test_ids_must_be_unique(tmp_path: Path) -> None:
    with pytest.raises(errors.ZMError, match="used twice"):
        load_pairs(write_pairs(tmp_path, pair_line(id="same"), pair_line(id="same")))


def test_an_empty_or_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(errors.ZMError, match="no labelled pairs"):
        load_pairs(write_pairs(tmp_path, "// nothing"))
    with pytest.raises(errors.ZMError, match="cannot read"):
        load_pairs(tmp_path / "absent.jsonl")


# -- running against an in-process judge ----------------------------------------


def test_a_perfect_judge_scores_perfectly_on_the_shipped_set() -> None:
    answers = oracle(load_pairs(SHIPPED))
    judge = FakeJudge(lambda request: answers[(request.a.content, request.b.content)])
    report = run_eval(judge, SHIPPED)
    result = report.to_dict()
    assert result["accuracy"] == 1.0
    assert result["false_supersede_rate"] == 0.0
    assert result["misjudged"] == []
    assert all(figures["precision"] == 1.0 for figures in result["per_verdict"].values())


def test_a_judge_that_supersedes_everything_shows_up_as_false_supersedes(tmp_path: Path) -> None:
    path = write_pairs(
        tmp_path,
        pair_line("complementary", id="c"),
        pair_line("unrelated", id="u"),
        pair_line("a_supersedes_b", id="s"),
        pair_line("duplicate", id="d"),
    )
    report = run_eval(FakeJudge(default=("a_supersedes_b", 0.99)), path)
    result = report.to_dict()
    assert result["false_supersedes"] == 2
    assert result["false_supersede_rate"] == 1.0
    assert result["accuracy"] == 0.25
    assert [m["id"] for m in result["misjudged"]] == ["c", "u", "d"]


def test_failures_are_counted_apart_by_kind(tmp_path: Path) -> None:
    path = write_pairs(tmp_path, *(pair_line("duplicate", id=str(i)) for i in range(4)))
    judge = FakeJudge(["duplicate", FailureKind.TIMEOUT, FailureKind.TIMEOUT, FailureKind.MALFORMED])
    result = run_eval(judge, path).to_dict()
    assert result["failures"] == {"timeout": 2, "malformed": 1}
    assert result["failure_rate"] == 0.75
    assert result["confusion"]["duplicate"]["failed"] == 3
    assert result["per_verdict"]["duplicate"]["precision"] == 1.0
    assert result["per_verdict"]["duplicate"]["recall"] == 0.25


def test_tokens_and_time_are_added_up(tmp_path: Path) -> None:
    path = write_pairs(tmp_path, *(pair_line(id=str(i)) for i in range(3)))
    report = run_eval(FakeJudge(default="duplicate", input_tokens=1_000, output_tokens=50), path)
    assert report.to_dict()["tokens"] == {"input": 3_000, "output": 150}
    assert report.estimated_cost(usd_per_mtok_in=2.0, usd_per_mtok_out=8.0) == pytest.approx(0.0072)


def test_the_eval_takes_the_adjudication_path_unless_asked_for_the_fast_one(tmp_path: Path) -> None:
    path = write_pairs(tmp_path, pair_line())
    judge = FakeJudge(default="duplicate", model=STRONG, fast_model=FAST)
    assert run_eval(judge, path).model == STRONG
    assert run_eval(judge, path, provisional=True).model == FAST
    assert [r.provisional for r in judge.requests if isinstance(r, PairRequest)] == [False, True]


def test_progress_is_reported_pair_by_pair(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    path = write_pairs(tmp_path, *(pair_line(id=str(i)) for i in range(3)))
    run_eval(FakeJudge(default="duplicate"), path, on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_offer_mode_cannot_be_evaluated() -> None:
    with pytest.raises(errors.ZMError, match="ZM_JUDGE_PROVIDER"):
        run_eval(NoneJudge(), SHIPPED)


def test_the_report_is_json_ready_and_renders_for_a_terminal(tmp_path: Path) -> None:
    path = write_pairs(
        tmp_path,
        pair_line("complementary", id="trap", tags=["broad-vs-gotcha"]),
        pair_line("duplicate", id="easy", tags=["duplicate"]),
    )
    report = run_eval(FakeJudge([("b_supersedes_a", 0.97), "duplicate"]), path)
    json.dumps(report.to_dict())
    console = Console(record=True, width=140, color_system=None)
    console.print(report.renderable())
    text = console.export_text()
    for expected in ("Confusion", "Per verdict", "false supersedes 1", "broad-vs-gotcha", "trap", "fake-strong"):
        assert expected in text, expected
    assert report.to_dict()["by_tag"] == {
        "broad-vs-gotcha": {"correct": 0, "pairs": 1},
        "duplicate": {"correct": 1, "pairs": 1},
    }


# -- end to end through a provider and its fake server --------------------------


def answer_from_oracle(answers: dict[tuple[str, str], str], provider: Provider) -> Responder:
    """A fake server responder that reads the pair out of the prompt and answers its label."""

    def respond(request: RecordedRequest) -> Reply:
        user = provider.server.user_message(request)
        contents = user.split("<content>\n")[1:]
        a, b = (part.split("\n</content>")[0] for part in contents)
        return provider.server.verdict(answers[(a, b)], 0.9)

    return respond


def test_the_eval_runs_end_to_end_against_each_provider(provider: Provider) -> None:
    pairs = load_pairs(SHIPPED)
    provider.server.respond_with(answer_from_oracle(oracle(pairs), provider))
    report = run_eval(provider.judge(), SHIPPED)
    result = report.to_dict()
    assert (result["provider"], result["model"], result["pairs"]) == (provider.name, STRONG, len(pairs))
    assert result["accuracy"] == 1.0
    assert result["tokens"]["input"] > 0
    assert len(provider.server.requests) == len(pairs)


def test_an_end_to_end_eval_counts_a_bad_answer_as_a_failure_not_a_verdict(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = write_pairs(tmp_path, pair_line("duplicate", id="ok"), pair_line("unrelated", id="broken"))
    openai_server.enqueue(openai_server.verdict("duplicate"), openai_server.completion("not json"))
    report = run_eval(Provider("openai", openai_server, tmp_path).judge(), path)
    assert report.to_dict()["failures"] == {"malformed": 1}
    assert [o.correct for o in report.outcomes] == [True, False]


def test_a_report_is_a_plain_value() -> None:
    report = EvalReport(provider="fake", model="m", outcomes=())
    assert report.to_dict()["pairs"] == 0
    assert report.to_dict()["accuracy"] is None


def test_wrong_supersedes_lead_the_misjudged_list(tmp_path: Path) -> None:
    path = write_pairs(
        tmp_path,
        pair_line("duplicate", id="missed-duplicate"),
        pair_line("a_supersedes_b", id="reversed"),
        pair_line("unrelated", id="false-supersede"),
    )
    report = run_eval(FakeJudge(["unrelated", "b_supersedes_a", "a_supersedes_b"]), path)
    assert [o.pair.id for o in report.misjudged] == ["reversed", "false-supersede", "missed-duplicate"]
