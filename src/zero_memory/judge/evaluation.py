"""``zm judge eval``: a judge against labelled pairs, before it is trusted with a corpus.

The labelled set is JSON Lines, one pair per line::

    {"id": "status-chain-01", "tags": ["status-chain"],
     "a": {"kind": "task", "age_days": 40, "content": "…"},
     "b": {"kind": "fact", "age_days": 2, "content": "…"},
     "label": "b_supersedes_a", "note": "why this label"}

``a``, ``b`` and ``label`` are required; ``label`` is one of the six
verdicts. ``id`` defaults to the line number, ``tags`` group pairs for the
per-tag accuracy, ``note`` is for the person reading the set. Blank lines and
lines starting with ``//`` are skipped.

The CLI needs two calls: ``report = run_eval(judge, path)`` then
``report.to_dict()`` (for ``--json``) or ``console.print(report.renderable())``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from zero_memory import errors
from zero_memory.domain.verdicts import HygieneVerdict, Verdict
from zero_memory.judge.base import FailureKind, Judge, Judged, JudgeFailure, Result, Usage
from zero_memory.judge.metrics import (
    COLUMNS,
    FAILED,
    VERDICTS,
    ConfusionMatrix,
    accuracy,
    failure_rate,
    false_supersede_rate,
    false_supersedes,
    precision,
    recall,
    reversed_supersedes,
)
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest

# -- the labelled set ----------------------------------------------------------


class _Side(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = Field(min_length=1)
    age_days: float = Field(ge=0)
    content: str = Field(min_length=1)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    tags: list[str] = []
    a: _Side
    b: _Side
    label: Verdict
    note: str = ""


@dataclass(frozen=True, slots=True)
class LabelledPair:
    id: str
    a: JudgedMemory
    b: JudgedMemory
    label: Verdict
    tags: tuple[str, ...] = ()
    note: str = ""


def load_pairs(path: str | Path) -> list[LabelledPair]:
    """The pairs of a labelled JSONL file; ``validation_failed`` names the line of the first problem."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise errors.validation(f"cannot read {path}: {exc.strerror or exc}") from None
    pairs: list[LabelledPair] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path.name}:{number}"
        pair = parse_pair(line, default_id=f"line-{number}", where=where)
        if pair.id in seen:
            raise errors.validation(f"{where}: id {pair.id!r} is used twice")
        seen.add(pair.id)
        pairs.append(pair)
    if not pairs:
        raise errors.validation(f"{path}: no labelled pairs in it")
    return pairs


def parse_pair(line: str, *, default_id: str, where: str) -> LabelledPair:
    try:
        row = _Row.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "line"
        raise errors.validation(f"{where}: {field}: {first['msg']}") from None
    return LabelledPair(
        id=row.id or default_id,
        a=JudgedMemory(row.a.kind, row.a.age_days, row.a.content),
        b=JudgedMemory(row.b.kind, row.b.age_days, row.b.content),
        label=row.label,
        tags=tuple(row.tags),
        note=row.note,
    )


# -- running -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """What the judge said about one labelled pair: a verdict, or a failure."""

    pair: LabelledPair
    predicted: Verdict | None
    confidence: float | None
    failure: FailureKind | None
    detail: str
    usage: Usage | None

    @property
    def correct(self) -> bool:
        return self.predicted is self.pair.label

    @property
    def dangerous(self) -> bool:
        """A wrong supersede: a false one, or one in the wrong direction — each retires a keeper."""
        return self.predicted is not None and self.predicted.is_supersede and not self.correct


Progress = Callable[[int, int], None]


def run_eval(
    judge: Judge,
    source: str | Path | Iterable[LabelledPair],
    *,
    provisional: bool = False,
    on_progress: Progress | None = None,
) -> EvalReport:
    """Judge every pair once, in order, on the adjudication path (the fast one if ``provisional``).

    Requests carry purpose ``scan``: the eval measures exactly what a sweep asks.
    Nothing is recorded in the usage ledger. ``on_progress(done, total)`` drives a progress bar.
    """
    if judge.provider == "none":
        raise errors.validation(
            "zm judge eval needs a model, but ZM_JUDGE_PROVIDER is none (offer mode): "
            "set ZM_JUDGE_PROVIDER to openai or anthropic"
        )
    pairs = load_pairs(source) if isinstance(source, str | Path) else list(source)
    outcomes = []
    for done, pair in enumerate(pairs, start=1):
        request = PairRequest(pair.a, pair.b, Purpose.SCAN, provisional=provisional)
        outcomes.append(_outcome(pair, judge.ask(request)))
        if on_progress is not None:
            on_progress(done, len(pairs))
    probe = JudgedMemory("fact", 0.0, "-")
    model = judge.model_for(PairRequest(probe, probe, Purpose.SCAN, provisional=provisional))
    return EvalReport(provider=judge.provider, model=model, outcomes=tuple(outcomes))


def _outcome(pair: LabelledPair, result: Result[HygieneVerdict]) -> PairOutcome:
    if isinstance(result, Judged):
        verdict = result.answer
        return PairOutcome(pair, verdict.verdict, verdict.confidence, None, verdict.rationale, result.usage)
    if isinstance(result, JudgeFailure):
        return PairOutcome(pair, None, None, result.kind, result.detail, result.usage)
    # Only offer mode answers with anything else, and run_eval refuses it up front.
    raise errors.internal(f"the judge gave {type(result).__name__} for a pair")


# -- the report ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalReport:
    provider: str
    model: str
    outcomes: tuple[PairOutcome, ...]

    @property
    def matrix(self) -> ConfusionMatrix:
        return ConfusionMatrix.of((o.pair.label, o.predicted) for o in self.outcomes)

    @property
    def input_tokens(self) -> int:
        return sum(o.usage.input_tokens for o in self.outcomes if o.usage)

    @property
    def output_tokens(self) -> int:
        return sum(o.usage.output_tokens for o in self.outcomes if o.usage)

    @property
    def latency_ms(self) -> int:
        return sum(o.usage.latency_ms for o in self.outcomes if o.usage)

    @property
    def failures(self) -> dict[str, int]:
        return dict(Counter(str(o.failure) for o in self.outcomes if o.failure is not None))

    @property
    def misjudged(self) -> list[PairOutcome]:
        """The pairs judged wrong: dangerous supersedes first, then in file order."""
        return sorted((o for o in self.outcomes if not o.correct), key=lambda o: not o.dangerous)

    def by_tag(self) -> dict[str, tuple[int, int]]:
        """Per tag: (pairs judged right, pairs)."""
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for outcome in self.outcomes:
            for tag in outcome.pair.tags:
                tally[tag][0] += outcome.correct
                tally[tag][1] += 1
        return {tag: (right, total) for tag, (right, total) in sorted(tally.items())}

    def estimated_cost(self, usd_per_mtok_in: float, usd_per_mtok_out: float) -> float:
        """Dollars, at the given prices per million input and output tokens."""
        return (self.input_tokens * usd_per_mtok_in + self.output_tokens * usd_per_mtok_out) / 1e6

    def to_dict(self) -> dict[str, Any]:
        """Everything in the report, JSON-ready (``zm judge eval --json``)."""
        matrix = self.matrix
        total = matrix.total
        return {
            "provider": self.provider,
            "model": self.model,
            "pairs": total,
            "accuracy": accuracy(matrix),
            "false_supersede_rate": false_supersede_rate(matrix),
            "false_supersedes": false_supersedes(matrix),
            "reversed_supersedes": reversed_supersedes(matrix),
            "failure_rate": failure_rate(matrix),
            "failures": self.failures,
            "per_verdict": {
                str(v): {
                    "support": matrix.support(v),
                    "predicted": matrix.predicted(v),
                    "precision": precision(matrix, v),
                    "recall": recall(matrix, v),
                }
                for v in VERDICTS
            },
            "confusion": {
                str(label): {column: matrix.count(label, column) for column in COLUMNS} for label in VERDICTS
            },
            "by_tag": {tag: {"correct": right, "pairs": n} for tag, (right, n) in self.by_tag().items()},
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "latency_ms": {"total": self.latency_ms, "mean": round(self.latency_ms / total) if total else 0},
            "misjudged": [
                {
                    "id": o.pair.id,
                    "label": str(o.pair.label),
                    "predicted": str(o.predicted) if o.predicted else FAILED,
                    "confidence": o.confidence,
                    "tags": list(o.pair.tags),
                    "detail": o.detail,
                }
                for o in self.misjudged
            ],
        }

    def renderable(self, *, max_misjudged: int = 20) -> RenderableType:
        """Tables for a terminal: confusion matrix, per-verdict figures, summary, worst misses."""
        return Group(*_render(self, max_misjudged))

    def __rich__(self) -> RenderableType:
        return self.renderable()


_SHORT = {
    "duplicate": "dup",
    "a_supersedes_b": "a>b",
    "b_supersedes_a": "b>a",
    "contradiction": "contra",
    "complementary": "compl",
    "unrelated": "unrel",
    FAILED: "failed",
}


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _render(report: EvalReport, max_misjudged: int) -> list[RenderableType]:
    matrix = report.matrix
    confusion = Table(title="Confusion (rows: label, columns: judge)", title_justify="left")
    confusion.add_column("label")
    for column in COLUMNS:
        confusion.add_column(_SHORT[column], justify="right")
    for label in VERDICTS:
        cells = []
        for column in COLUMNS:
            n = matrix.count(label, column)
            style = "bold green" if column == str(label) else ("red" if n else "dim")
            cells.append(Text(str(n), style=style))
        confusion.add_row(str(label), *cells)

    per_verdict = Table(title="Per verdict", title_justify="left")
    for name in ("verdict", "pairs", "called", "precision", "recall"):
        per_verdict.add_column(name, justify="left" if name == "verdict" else "right")
    for verdict in VERDICTS:
        per_verdict.add_row(
            str(verdict),
            str(matrix.support(verdict)),
            str(matrix.predicted(verdict)),
            _percent(precision(matrix, verdict)),
            _percent(recall(matrix, verdict)),
        )

    failures = ", ".join(f"{kind} {n}" for kind, n in sorted(report.failures.items())) or "none"
    total = matrix.total
    summary = Text.assemble(
        (f"{report.provider} · {report.model} · {total} pairs\n", "bold"),
        f"accuracy {_percent(accuracy(matrix))}   ",
        (
            f"false supersedes {false_supersedes(matrix)} ({_percent(false_supersede_rate(matrix))} "
            "of pairs to keep)   ",
            "bold red" if false_supersedes(matrix) else "",
        ),
        f"reversed supersedes {reversed_supersedes(matrix)}\n",
        f"failures: {failures}\n",
        f"tokens: {report.input_tokens:,} in, {report.output_tokens:,} out   ",
        f"time: {report.latency_ms / 1000:.1f} s ({report.latency_ms / total if total else 0:.0f} ms a pair)",
    )

    parts: list[RenderableType] = [summary, confusion, per_verdict]
    tags = report.by_tag()
    if tags:
        by_tag = Table(title="By tag", title_justify="left")
        by_tag.add_column("tag")
        by_tag.add_column("right", justify="right")
        for tag, (right, n) in tags.items():
            by_tag.add_row(tag, f"{right}/{n}")
        parts.append(by_tag)
    misjudged = report.misjudged[:max_misjudged]
    if misjudged:
        hidden = len(report.misjudged) - len(misjudged)
        misses = Table(
            title="Misjudged (wrong supersedes first)",
            title_justify="left",
            caption=f"… and {hidden} more (--json lists them all)" if hidden else None,
            caption_justify="left",
        )
        for name in ("id", "label", "judge", "conf.", "why"):
            misses.add_column(name, overflow="fold")
        for o in misjudged:
            misses.add_row(
                Text(o.pair.id, style="bold red" if o.dangerous else ""),
                _SHORT[str(o.pair.label)],
                _SHORT[str(o.predicted)] if o.predicted else FAILED,
                "–" if o.confidence is None else f"{o.confidence:.2f}",
                o.detail[:160],
            )
        parts.append(misses)
    return parts
