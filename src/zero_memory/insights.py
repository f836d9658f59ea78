"""The numbers behind the Insights page: pure aggregations, and one function that reads their inputs.

Every figure is about the signed-in user's own memories and writes: queue rows
raised and dismissed on memories they own, automatic actions of their runs,
judge tokens their ledger rows record, their ``remember`` calls (kept events and
the per-day counts old ones are rolled up into, hygiene/retention.py), and the
chunks of conversation they sent to capture.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture import budget
from zero_memory.capture.models import BudgetStatus
from zero_memory.domain.records import AuditEntry, CaptureChunk, ChunkStatus, Run
from zero_memory.judge.question import Purpose

WINDOW_DAYS = 30
RUNS_SHOWN = 20
QUEUE_VERDICTS = ("duplicate", "supersedes", "contradiction", "unjudged", "challenged", "stale_suspect", "outdated")
AUTO_VERDICTS = ("duplicate", "supersedes", "other")
DISMISSAL_KINDS = ("stale", "rejudge")
CAPTURE_OUTCOMES = ("created", "yielded", "absorbed", "refused")
CHUNKS_READ = 10_000


@dataclass(frozen=True, slots=True)
class Column:
    """One bar of a chart: a label and a count per category."""

    label: str
    values: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.values.values())


@dataclass(frozen=True, slots=True)
class TokenTotal:
    owner: str
    purpose: str
    calls: int
    input_tokens: int
    output_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Share:
    """How many writes declared a supersede, overall and week by week."""

    declared: int
    total: int
    weeks: list[Column]

    @property
    def ratio(self) -> float | None:
        return self.declared / self.total if self.total else None


@dataclass(frozen=True, slots=True)
class Capture:
    """What extraction made of the chunks sent in the window, and what it cost."""

    days: list[Column]
    calls: int
    input_tokens: int
    output_tokens: int
    chunks: Mapping[str, int]
    allowance: BudgetStatus | None = None

    @property
    def totals(self) -> dict[str, int]:
        return totals(self.days, CAPTURE_OUTCOMES)


@dataclass(frozen=True, slots=True)
class Insights:
    days: int
    inflow: list[Column]
    actions: list[Column]
    dismissals: list[Column]
    tokens: list[TokenTotal]
    supersede: Share
    capture: Capture = field(default_factory=lambda: Capture([], 0, 0, 0, {}))

    @property
    def inflow_totals(self) -> dict[str, int]:
        return totals(self.inflow, QUEUE_VERDICTS)

    @property
    def action_totals(self) -> dict[str, int]:
        return totals(self.actions, AUTO_VERDICTS)

    @property
    def dismissal_totals(self) -> dict[str, int]:
        return totals(self.dismissals, DISMISSAL_KINDS)


# -- pure aggregations ----------------------------------------------------------


def day_of(value: datetime | str) -> date:
    """The UTC day of a timestamp, whether the store gave a datetime or its fixed-width text."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).date()


def window(start: date, days: int) -> list[date]:
    return [start + timedelta(days=i) for i in range(days)]


def day_label(day: date) -> str:
    return day.strftime("%m-%d")


def queue_verdict(payload: Mapping[str, Any]) -> str:
    """A raised row's verdict as the queue files it: both supersede directions are ``supersedes``."""
    verdict = str(payload.get("verdict") or "unjudged")
    return "supersedes" if verdict in ("a_supersedes_b", "b_supersedes_a") else verdict


def by_day(dated: Iterable[tuple[date, str]], *, start: date, days: int) -> list[Column]:
    """One column per day of the window, counting each (day, category); days outside are ignored."""
    counts: dict[date, Counter[str]] = defaultdict(Counter)
    for day, category in dated:
        counts[day][category] += 1
    return [Column(day_label(d), dict(counts.get(d, Counter()))) for d in window(start, days)]


def inflow_by_day(entries: Iterable[AuditEntry], *, start: date, days: int) -> list[Column]:
    """Queue rows raised per day, by verdict."""
    return by_day(((day_of(e.at), queue_verdict(e.payload)) for e in entries), start=start, days=days)


def dismissal_kind(entry: AuditEntry) -> str:
    """Which self-healing pass dismissed a row: the stale sweep or the re-judge pass."""
    return "rejudge" if "rejudge" in entry.payload or entry.actor.endswith("rejudge") else "stale"


def dismissals_by_day(entries: Iterable[AuditEntry], *, start: date, days: int) -> list[Column]:
    return by_day(((day_of(e.at), dismissal_kind(e)) for e in entries), start=start, days=days)


def auto_verdict(payload: Mapping[str, Any]) -> str:
    verdict = queue_verdict(payload)
    return verdict if verdict in AUTO_VERDICTS else "other"


def actions_per_run(entries: Iterable[AuditEntry], runs: Sequence[Run]) -> list[Column]:
    """Automatic invalidations per run, by verdict, oldest run first (``runs`` as listed, newest first)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for entry in entries:
        if entry.run_id:
            counts[entry.run_id][auto_verdict(entry.payload)] += 1
    ordered = sorted(runs, key=lambda r: (r.started_at, r.id))
    return [Column(day_label(day_of(r.started_at)), dict(counts.get(r.id, Counter()))) for r in ordered]


def tokens_by_owner_and_purpose(rows: Iterable[Mapping[str, Any]]) -> list[TokenTotal]:
    """Ledger rows summed per (owner, purpose), the most tokens first."""
    sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        entry = sums[(str(row["owner"]), str(row["purpose"]))]
        entry[0] += 1
        entry[1] += int(row["input_tokens"] or 0)
        entry[2] += int(row["output_tokens"] or 0)
    found = [TokenTotal(owner, purpose, *numbers) for (owner, purpose), numbers in sums.items()]
    return sorted(found, key=lambda t: (-t.total, t.owner, t.purpose))


def supersede_share(events: Iterable[Mapping[str, Any]], *, start: date, days: int) -> Share:
    """Of the successful ``remember`` calls in the window, how many declared a supersede; also per week.

    ``events`` are usage events (``at``) or per-day counts of them (``day``, ``count``), as
    ``Tx.usage_by_day`` gives them once old events are rolled up.
    """
    weeks = [start + timedelta(days=i) for i in range(0, days, 7)]
    per_week: dict[date, Counter[str]] = {w: Counter() for w in weeks}
    declared = total = 0
    end = start + timedelta(days=days)
    for event in events:
        day = date.fromisoformat(event["day"]) if "day" in event else day_of(event["at"])
        if event.get("outcome", "ok") != "ok" or not start <= day < end:
            continue
        week = weeks[(day - start).days // 7]
        kind = "declared" if int(event.get("declared_supersede") or 0) else "plain"
        count = int(event.get("count", 1))
        per_week[week][kind] += count
        total += count
        declared += count if kind == "declared" else 0
    return Share(declared, total, [Column(f"wk {day_label(w)}", dict(per_week[w])) for w in weeks])


def captures_by_day(chunks: Iterable[CaptureChunk], *, start: date, days: int) -> list[Column]:
    """Per day a chunk's extraction finished: the statements written, yielded, absorbed and refused."""
    counts: dict[date, Counter[str]] = defaultdict(Counter)
    for chunk in chunks:
        if chunk.status is not ChunkStatus.DONE or chunk.finished_at is None:
            continue
        day = counts[day_of(chunk.finished_at)]
        for outcome in CAPTURE_OUTCOMES:
            day[outcome] += getattr(chunk, outcome)
    return [Column(day_label(d), {k: v for k, v in counts.get(d, Counter()).items() if v}) for d in window(start, days)]


def capture_of(
    chunks: Sequence[CaptureChunk],
    ledger: Iterable[Mapping[str, Any]],
    *,
    start: date,
    days: int,
    allowance: BudgetStatus | None = None,
) -> Capture:
    """The capture figures of a window: outcomes per day, extraction calls and tokens, chunks by state."""
    since = datetime.combine(start, time.min, UTC)
    calls = tokens_in = tokens_out = 0
    for row in ledger:
        if row["purpose"] != Purpose.EXTRACT.value or day_of(row["at"]) < since.date():
            continue
        calls += 1
        tokens_in += int(row["input_tokens"] or 0)
        tokens_out += int(row["output_tokens"] or 0)
    states = Counter(chunk.status.value for chunk in chunks)
    return Capture(
        days=captures_by_day(chunks, start=start, days=days),
        calls=calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        chunks={status.value: states[status.value] for status in ChunkStatus if states[status.value]},
        allowance=allowance,
    )


def totals(columns: Iterable[Column], categories: Sequence[str]) -> dict[str, int]:
    """Sums per category, in the given order, then any others; zeros left out."""
    summed: Counter[str] = Counter()
    for column in columns:
        summed.update(column.values)
    ordered = [c for c in categories if summed.get(c)] + sorted(c for c in summed if c not in categories and summed[c])
    return {c: summed[c] for c in ordered}


# -- reading the inputs ---------------------------------------------------------------


def insights_for(app: App, caller: Caller, *, days: int = WINDOW_DAYS) -> Insights:
    uid = caller.uid
    today = app.clock().astimezone(UTC).date()
    start = today - timedelta(days=days - 1)
    since = datetime.combine(start, time.min, UTC)
    with app.store.tx() as tx:
        tx.act_as(uid)
        raised = [e for e in tx.audit_actions("queue.raise", since=since) if e.owner == uid]
        dismissed = [e for e in tx.audit_actions("queue.dismiss", since=since) if e.owner == uid]
        runs = tx.list_runs(owner=uid, limit=RUNS_SHOWN)
        first = min((r.started_at for r in runs), default=since)
        ids = {r.id for r in runs}
        auto = [e for e in tx.audit_actions("hygiene.auto_resolve", since=first) if e.owner == uid and e.run_id in ids]
        ledger = tx.ledger(owner=uid)
        writes = tx.usage_by_day(since=since, tool="remember", user_id=uid)
        chunks = tx.list_chunks(owner=uid, since=since, limit=CHUNKS_READ)
    allowance = budget.status(app, uid, app.clock())
    return Insights(
        days=days,
        inflow=inflow_by_day(raised, start=start, days=days),
        actions=actions_per_run(auto, runs),
        dismissals=dismissals_by_day(dismissed, start=start, days=days),
        tokens=tokens_by_owner_and_purpose(ledger),
        supersede=supersede_share(writes, start=start, days=days),
        capture=capture_of(chunks, ledger, start=start, days=days, allowance=allowance),
    )
