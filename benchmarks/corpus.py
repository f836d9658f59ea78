"""Synthetic memories that read like an agent's notes, for benchmarks.

Deterministic for a seed; varied enough that vector search and full text do
real work (many services, tools, numbers and phrasings).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

SERVICES = [
    "billing",
    "auth",
    "search",
    "payments",
    "gateway",
    "ledger",
    "notifier",
    "scheduler",
    "indexer",
    "exporter",
    "importer",
    "reporting",
    "checkout",
    "catalog",
    "inventory",
    "profile",
    "media",
    "audit",
]
TOOLS = [
    "ruff",
    "mypy",
    "pytest",
    "docker",
    "kubectl",
    "terraform",
    "helm",
    "poetry",
    "uv",
    "pnpm",
    "vite",
    "postgres",
    "redis",
    "kafka",
    "nginx",
    "celery",
    "grpc",
    "alembic",
    "sentry",
    "grafana",
]
VERBS = [
    "listens on",
    "times out after",
    "retries",
    "caches",
    "logs to",
    "reads from",
    "writes to",
    "depends on",
    "is deployed with",
    "is configured through",
]
KINDS = ["fact", "decision", "gotcha", "convention", "reference", "preference", "episode", "task"]
TEMPLATES = [
    "The {s} service {v} {t} ({n}).",
    "Decided to use {t} for the {s} service because {t2} kept failing under load at {n} requests per second.",
    "Gotcha: {t} in the {s} service needs the flag --{w} or it silently drops {n} records.",
    "Convention: every {s} handler validates input with {t} before calling {t2} (rule {n}).",
    "The {s} team prefers {t} over {t2} for anything that touches {w} data, per ADR {n}.",
    "Incident {n}: the {s} service ran out of {w} connections; raising the {t} pool fixed it.",
    "Reference: the {s} runbook for {t} lives at docs/runbooks/{w}-{n}.md.",
    "TODO: migrate the {s} {w} jobs from {t2} to {t} before release {n}.",
]
WORDS = [
    "tenant",
    "session",
    "invoice",
    "export",
    "replica",
    "shard",
    "token",
    "webhook",
    "cursor",
    "batch",
    "queue",
    "snapshot",
    "index",
    "schema",
    "partition",
    "lease",
    "quota",
    "upload",
]


def memories(count: int, seed: int = 7) -> Iterator[tuple[str, str]]:
    """(content, kind) pairs; contents are unique."""
    rng = random.Random(seed)
    for n in range(count):
        template = TEMPLATES[n % len(TEMPLATES)]
        text = template.format(
            s=rng.choice(SERVICES),
            v=rng.choice(VERBS),
            t=rng.choice(TOOLS),
            t2=rng.choice(TOOLS),
            w=rng.choice(WORDS),
            n=n,
        )
        yield text, KINDS[n % len(KINDS)]


def queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [
        f"how does the {rng.choice(SERVICES)} service use {rng.choice(TOOLS)} for {rng.choice(WORDS)}"
        for _ in range(count)
    ]
