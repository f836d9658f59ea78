"""A month in the life of one user's memories, for the dashboard's screenshots.

Everything goes through the real paths — ``remember``, hygiene cycles with a
scripted judge, queue settlements, a merge — on a clock set back day by day,
so the pages show ages, histories and a month of insights. Only the usage
ledger and the write events (which MCP calls would have recorded) are
inserted directly.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.web.helpers import Seeder
from zero_memory.access.caller import Caller
from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import IngestRequest
from zero_memory.clock import utcnow
from zero_memory.conflicts.choice import Choice, KeepBoth, Merge, Winner
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.domain.verdicts import HygieneVerdict, PortabilityVerdict, Verdict
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.questions.extraction import ExtractionRequest
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.memory.lifecycle import forget

USER = "alice"
HUMAN = Caller(USER, client="dashboard", author_kind="human")


class BackClock:
    """Now, as the story needs it: set to a past day, each reading a second after the last."""

    def __init__(self) -> None:
        self.at: datetime | None = None

    def day(self, days_ago: float) -> None:
        self.at = utcnow() - timedelta(days=days_ago)

    def __call__(self) -> datetime:
        if self.at is None:
            return utcnow()
        self.at += timedelta(seconds=1)
        return self.at


@dataclass
class Script:
    """The judge's answers, by the pair of texts it is shown; everything else is unrelated."""

    answers: dict[frozenset[str], Any] = field(default_factory=dict)
    extractions: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    def __call__(self, request: Any) -> Any:
        if isinstance(request, ExtractionRequest):
            return self.extractions.get(request.transcript, [])
        if not isinstance(request, PairRequest):
            return PortabilityVerdict(
                rationale="Specific to how this repository is set up.", portable=False, confidence=0.8
            )
        found = self.answers.get(frozenset((request.a.content, request.b.content)))
        return found or HygieneVerdict(rationale="Different subjects.", verdict=Verdict.UNRELATED, confidence=0.9)

    def says(self, a: str, b: str, verdict: Verdict, confidence: float, rationale: str) -> None:
        self.answers[frozenset((a, b))] = HygieneVerdict(rationale=rationale, verdict=verdict, confidence=confidence)

    def judge_factory(self) -> Any:
        judge = FakeJudge(self)
        return lambda owner, run_id: judge


def month(seed: Seeder, clock: BackClock, script: Script) -> dict[str, str]:
    """Build the month, oldest event first; returns the ids the screenshots open."""
    app = seed.app
    ids: dict[str, str] = {}
    events: list[tuple[float, Callable[[], None]]] = []

    def on(days_ago: float) -> Callable[[Callable[[], None]], Callable[[], None]]:
        def register(step: Callable[[], None]) -> Callable[[], None]:
            events.append((days_ago, step))
            return step

        return register

    clock.day(30)
    checkout = seed.project(USER, "checkout-service")
    infra = seed.project(USER, "infra")

    @on(29)
    def first_notes() -> None:
        seed.memory(
            USER, "Prefer small, reviewable PRs: one concern each, under ~400 lines.", kind="preference", scope="core"
        )
        seed.memory(
            USER,
            "API handlers return errors as application/problem+json (RFC 9457).",
            kind="convention",
            scope=checkout,
        )
        seed.memory(
            USER, "Order totals are stored in cents as integers; never floats.", kind="decision", scope=checkout
        )
        tool = seed.memory(
            USER, "ripgrep respects .gitignore unless given --no-ignore.", kind="fact", scope=infra, client="codex"
        )
        pinned = seed.memory(
            USER, "This repository pins Terraform 1.7 in .terraform-version.", kind="fact", scope=infra
        )
        ids["proposal"] = seed.proposal(
            USER, tool, confidence=0.91, rationale="A property of ripgrep itself; true in any repository."
        )
        seed.proposal(
            USER,
            pinned,
            confidence=0.72,
            rationale="Version pinning advice may hold elsewhere, "
            "though the exact version is specific to this repository.",
        )

    # A fact a later one replaced, and that one merged with a third: a history two deep.
    timeouts: dict[str, str] = {}

    @on(26)
    def first_timeout() -> None:
        timeouts["first"] = seed.memory(USER, "Checkout calls the payments API with a 5 s timeout.", scope=checkout)

    @on(19)
    def second_timeout() -> None:
        timeouts["second"] = seed.memory(
            USER,
            "Checkout calls the payments API with a 10 s timeout since the March incident.",
            scope=checkout,
            client="cursor",
        )
        settle(
            seed,
            seed.pair_of(
                USER,
                timeouts["first"],
                timeouts["second"],
                verdict="b_supersedes_a",
                confidence=0.84,
                rationale="B raises the timeout A states; B is newer and cites the incident.",
            ),
            Winner(timeouts["second"]),
        )

    @on(12)
    def third_timeout() -> None:
        timeouts["third"] = seed.memory(
            USER,
            "Payments API calls from checkout retry twice on 503, each with the 10 s timeout.",
            scope=checkout,
            client="codex",
        )

    @on(4)
    def merged() -> None:
        merge = seed.pair_of(
            USER,
            timeouts["second"],
            timeouts["third"],
            verdict="duplicate",
            confidence=0.71,
            rationale="Both describe how checkout calls the payments API; B adds the retries.",
        )
        ids["merged"] = (
            resolve_conflict(
                app,
                HUMAN,
                merge,
                Merge(
                    "Checkout calls the payments API with a 10 s timeout "
                    "(raised from 5 s after the March incident) and retries twice on 503."
                ),
                human=True,
            ).created
            or ""
        )

    # Rows raised and settled over the month: the queue's inflow.
    history = [
        (27, "contradiction", "Redis runs on 6379 in dev.", "Dev Redis listens on 6380 to avoid clashes.", "keep"),
        (24, "duplicate", "Lint with ruff check .", "Run ruff check on the whole repo before pushing.", "keep"),
        (22, "a_supersedes_b", "Node 20 is the CI runtime.", "CI runs on Node 18.", "a"),
        (17, "unjudged", "Staging deploys need the VPN.", "Deploys to staging go through the bastion host.", "keep"),
        (15, "contradiction", "Logs ship to Loki.", "Application logs go to Elasticsearch.", "b"),
        (11, "duplicate", "Use conventional commits.", "Commit messages follow Conventional Commits 1.0.", "a"),
        (9, "b_supersedes_a", "Release notes live in CHANGELOG.md.", "Release notes moved to docs/releases/.", "b"),
    ]
    for days_ago, verdict, a_text, b_text, outcome in history:
        raised: dict[str, tuple[str, str, str]] = {}

        def raise_row(
            verdict: str = verdict,
            a_text: str = a_text,
            b_text: str = b_text,
            raised: dict[str, tuple[str, str, str]] = raised,
        ) -> None:
            raised["row"] = seed.pair(USER, a_text, b_text, verdict=verdict, confidence=0.8, scope=checkout)

        def settle_row(outcome: str = outcome, raised: dict[str, tuple[str, str, str]] = raised) -> None:
            dispute, a_id, b_id = raised["row"]
            choices: dict[str, Choice] = {"keep": KeepBoth(), "a": Winner(a_id), "b": Winner(b_id)}
            settle(seed, dispute, choices[outcome])

        on(days_ago)(raise_row)
        on(days_ago - 0.5)(settle_row)

    # A row whose side is forgotten (the stale sweep drops it), and one the re-judge pass calls complementary.
    @on(16)
    def moot_row() -> None:
        _, gone, _ = seed.pair(
            USER,
            "The sandbox card number is 4242 4242 4242 4242.",
            "Use 4000 0566 5566 5556 for debit card tests.",
            scope=checkout,
        )
        clock.day(15)
        forget(app, seed.caller(USER), gone, "the sandbox changed")

    @on(10)
    def rejudged_row() -> None:
        _, a_id, b_id = seed.pair(
            USER,
            "Terraform plans run in CI on every PR.",
            "Terraform applies only run from the main branch.",
            scope=infra,
        )
        script.says(
            seed.get(a_id).content,
            seed.get(b_id).content,
            Verdict.COMPLEMENTARY,
            0.93,
            "Plans on every PR and applies from main are two halves of one workflow.",
        )

    # Scans with the judge: each finds a fresh duplicate and resolves it on its own.
    scans = [
        (
            21,
            "Feature flags are read from LaunchDarkly once at startup.",
            "Feature flags come from LaunchDarkly and are fetched once at boot.",
            checkout,
            False,
        ),
        (
            14,
            "The checkout service retries payment captures three times with exponential backoff.",
            "Payment captures are retried 3 times, backing off exponentially.",
            checkout,
            False,
        ),
        (
            8,
            "The staging Sentry DSN lives in the infra/secrets README, not in .env.",
            "The staging Sentry DSN is documented in infra/secrets/README.md.",
            infra,
            True,
        ),
        (
            2,
            "Grafana dashboards are provisioned from infra/grafana/*.json.",
            "Dashboards in Grafana come from JSON files under infra/grafana.",
            infra,
            False,
        ),
    ]
    for days_ago, older, newer, scope, rejudge in scans:

        def scan(
            days_ago: float = days_ago,
            older: str = older,
            newer: str = newer,
            scope: str = scope,
            rejudge: bool = rejudge,
        ) -> None:
            seed.memory(USER, older, scope=scope)
            clock.day(days_ago - 0.1)
            seed.memory(USER, newer, scope=scope, client="cursor")
            script.says(older, newer, Verdict.DUPLICATE, 0.97, "Both state the same fact in other words.")
            clock.day(days_ago - 0.2)
            run, _ = start_cycle(app, USER, started_by=USER, rejudge=rejudge, wait=True)
            ids["run"] = run.id
            tokens(seed, run.id, clock, rejudge)

        on(days_ago)(scan)

    # Conversations sent by the Claude Code hook: what extraction made of them.
    staging_url = "The checkout service's staging URL is https://staging.checkout.internal."
    conversations = [
        (25, "checkout-service", [
            ("Checkout stores order totals in cents, as integers.", "decision", "project"),
            (staging_url, "fact", "project"),
        ]),
        (20, "checkout-service", [
            ("Alice wants answers without preamble.", "preference", "personal"),
            ("Checkout's integration tests need the payments sandbox running (make sandbox-up).", "gotcha", "project"),
        ]),
        (13, "checkout-service", [
            ("Merged feature branches of checkout are deleted automatically.", "fact", "project"),
            (staging_url, "fact", "project"),
        ]),
        (7, "infra", [
            ("The Terraform state of infra lives in the S3 bucket zm-tf-state.", "reference", "project"),
            ("Renew the staging TLS certificate before the end of the month.", "task", "project"),
        ]),
        (2, "infra", [("Grafana alerts page the on-call engineer through PagerDuty.", "fact", "project")]),
    ]  # fmt: skip
    for days_ago, project, said in conversations:

        def converse(
            days_ago: float = days_ago, project: str = project, said: list[tuple[str, str, str]] = said
        ) -> None:
            text = "".join(
                f"user: what should I know about this?\n\nassistant: {content}\n\n" for content, _, _ in said
            )
            script.extractions[text] = [{"content": c, "kind": k, "scope_hint": h} for c, k, h in said]
            request = IngestRequest(transcript_chunk=text, conversation_id=f"session-{days_ago}", project_hint=project)
            ingest(app, Caller(USER, client="claude-code"), request)
            app.wait_idle()
            extraction_tokens(seed, clock, len(text))

        on(days_ago)(converse)

    # What is waiting now.
    @on(6)
    def pending_port() -> None:
        ids["pending"], _, _ = seed.pair(
            USER,
            "The staging database listens on port 5433.",
            "Staging Postgres moved to port 6543 when pgbouncer went in.",
            verdict="contradiction",
            confidence=0.86,
            rationale="Both give the staging database's port; B says it changed with the pgbouncer rollout.",
            scope=infra,
        )

    @on(3)
    def pending_deploys() -> None:
        seed.pair(
            USER,
            "Deploys go out from main every Tuesday at 14:00 UTC.",
            "With the release train, deploys go out Tuesdays and Thursdays at 14:00 UTC.",
            verdict="b_supersedes_a",
            confidence=0.78,
            rationale="B extends A's schedule with a second weekly slot; B is newer.",
            scope=checkout,
        )

    @on(1)
    def pending_challenge() -> None:
        seed.challenged(
            USER,
            "The public API allows 100 requests per minute per token.",
            reason="Hit 429s at about 60 requests per minute today; the limit may have been lowered.",
        )

    for days_ago, step in sorted(events, key=lambda event: -event[0]):
        clock.day(days_ago)
        step()
    writes(seed, clock)
    clock.at = None
    return ids


def settle(seed: Seeder, dispute: str, choice: Choice) -> None:
    resolve_conflict(seed.app, HUMAN, dispute, choice, human=True)


def tokens(seed: Seeder, run_id: str, clock: BackClock, rejudge: bool) -> None:
    """The judge calls a run paid for, as the owners' judge would have recorded them."""
    rng = random.Random(run_id)
    purposes = [("scan", "gpt-4.1", 6), ("portability", "gpt-4.1", 2), ("rescan", "gpt-4.1-mini", 2)]
    if rejudge:
        purposes.append(("rejudge", "gpt-4.1", 3))
    with seed.app.store.tx(write=True) as tx:
        for purpose, model, calls in purposes:
            for _ in range(calls):
                tx.add_ledger(
                    owner=USER,
                    model=model,
                    purpose=purpose,
                    input_tokens=rng.randint(380, 720),
                    output_tokens=rng.randint(40, 110),
                    latency_ms=rng.randint(600, 2400),
                    outcome="ok",
                    run_id=run_id,
                    at=clock(),
                )


def extraction_tokens(seed: Seeder, clock: BackClock, chars: int) -> None:
    """The extraction call a chunk paid for, as the owner's model would have recorded it."""
    with seed.app.store.tx(write=True) as tx:
        tx.add_ledger(
            owner=USER,
            model="gpt-4.1-mini",
            purpose="extract",
            input_tokens=900 + chars // 4,
            output_tokens=120,
            latency_ms=1800,
            outcome="judged",
            run_id=None,
            at=clock(),
        )


def writes(seed: Seeder, clock: BackClock) -> None:
    """A month of ``remember`` calls, a fifth of them declaring what they supersede."""
    rng = random.Random(7)
    with seed.app.store.tx(write=True) as tx:
        for days_ago in range(29, -1, -1):
            clock.day(days_ago)
            for _ in range(rng.randint(1, 5)):
                tx.add_usage_event(
                    user_id=USER,
                    tool="remember",
                    client="claude-code",
                    outcome="ok",
                    declared_supersede=rng.random() < 0.2 + days_ago * -0.004,
                    at=clock(),
                )
