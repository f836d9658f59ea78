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


# -- agent notes with paraphrase queries (benchmarks/quality.py) ----------------------------------
#
# Each note is one topic's template filled from shared vocabularies, so that at
# 100k many notes share a service, a technology and a topic and only their
# particulars (the other names, identifiers, numbers) tell them apart. Each
# topic also has paraphrases: questions an agent would ask to find that note,
# in other words than the note's own (synonyms, another sentence structure, no
# answer value). Some paraphrases carry an identifier of the note (an error
# code, a variable, a file), most carry only its names: neither a bare vector
# search nor a bare keyword search finds every target.


def _words(text: str) -> list[str]:
    return text.split()


SERVICE_NAMES = _words(
    "billing auth search payments gateway ledger notifier scheduler indexer exporter importer reporting "
    "checkout catalog inventory profile media audit shipping pricing invoicing onboarding recommendations "
    "analytics messaging comments feeds geocoding translation thumbnails transcoding webhooks accounts "
    "orders refunds fraud kyc loyalty coupons subscriptions entitlements ratelimiter identity directory "
    "provisioning backup archive partners admin cms storefront cart wishlist reviews tickets support "
    "telemetry tracing ingest crawler sitemap mailer sms push"
)
TECHNOLOGIES = _words(
    "postgres mysql redis memcached kafka rabbitmq nats sqs s3 elasticsearch opensearch clickhouse "
    "bigquery snowflake dynamodb cassandra mongodb etcd consul vault nginx envoy haproxy traefik celery "
    "sidekiq temporal airflow dagster spark flink grpc graphql minio ceph zookeeper pulsar timescaledb "
    "cockroachdb neo4j meilisearch typesense qdrant pgbouncer keycloak stripe twilio sendgrid segment"
)
BUILD_TOOLS = _words(
    "ruff mypy pytest docker kubectl terraform helm poetry uv pnpm vite webpack esbuild jest playwright "
    "cypress eslint prettier black gradle maven cargo bazel make tox nox alembic flyway liquibase dbt "
    "ansible packer argocd skaffold tilt k6 locust"
)
OBJECTS = _words(
    "invoices sessions exports replicas shards tokens webhooks cursors batches snapshots indexes schemas "
    "partitions leases quotas uploads thumbnails receipts refunds carts orders coupons events "
    "notifications reports attachments avatars transcripts payouts subscriptions sitemaps embeddings "
    "certificates manifests"
)
PROJECTS = _words(
    "atlas borealis cobalt dynamo ember falcon granite harbor iris juniper kestrel lumen meridian nimbus "
    "onyx pelican quartz raven sequoia tundra umbra vortex willow xenon yarrow zephyr aurora basalt cedar "
    "estuary fjord glacier horizon indigo jasper krypton lagoon mosaic"
)
PEOPLE = _words(
    "Priya Jonas Mei Tomasz Aisha Lucas Ingrid Kenji Sofia Rafael Amara Dmitri Elena Omar Hannah Mateo "
    "Yuki Noah Fatima Lars Chloe Ravi Zofia Diego Leila Carmen Theo Nadia Felix"
)
TEAMS = _words("platform payments-core data infra mobile web growth security sre developer-experience identity ml")
ENVIRONMENTS = ["staging", "production", "dev", "qa", "sandbox", "canary", "preview"]
RESOURCES = ["database", "redis", "kafka", "http", "grpc", "ldap", "smtp"]
LANGUAGES = ["Python", "Go", "TypeScript", "Rust", "Kotlin", "Java"]
STYLES = (
    "early returns over nested ifs",
    "dataclasses over dicts",
    "explicit type hints on every function",
    "small modules with one job",
    "table-driven tests",
    "errors wrapped with context",
)
# What a question says when it does not name the technology.
CATEGORIES = {
    **dict.fromkeys(_words("postgres mysql cockroachdb timescaledb cassandra mongodb dynamodb neo4j"), "database"),
    **dict.fromkeys(_words("redis memcached"), "cache"),
    **dict.fromkeys(_words("kafka rabbitmq nats sqs pulsar"), "message broker"),
    **dict.fromkeys(_words("s3 minio ceph"), "object store"),
    **dict.fromkeys(_words("elasticsearch opensearch meilisearch typesense qdrant"), "search engine"),
    **dict.fromkeys(_words("clickhouse bigquery snowflake"), "warehouse"),
    **dict.fromkeys(_words("etcd consul zookeeper vault keycloak"), "config store"),
    **dict.fromkeys(_words("nginx envoy haproxy traefik pgbouncer"), "proxy"),
    **dict.fromkeys(_words("celery sidekiq temporal airflow dagster spark flink"), "job runner"),
    **dict.fromkeys(_words("grpc graphql"), "API layer"),
    **dict.fromkeys(_words("stripe twilio sendgrid segment"), "vendor API"),
}
REASONS = (
    "the old client leaked file handles",
    "it halved the p99 latency",
    "the vendor dropped support",
    "it kept timing out under load",
    "we needed exactly-once delivery",
    "the licence cost doubled",
    "the team already runs it elsewhere",
    "backfills took all night",
    "it supports row-level security",
    "the managed offering removed an on-call rotation",
)
EXTRAS = (
    " (see OPS-{n})",
    " Confirmed by {person}.",
    " Checked again after release {v}.",
    " Found while debugging PR #{n}.",
    " {person} asked to keep this in mind.",
    "",
    "",
    "",
)

# kind, note templates, paraphrase templates
TOPICS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "fact",
        ("The {svc} service times out requests to {tech} after {n2} seconds; {ENV}_TIMEOUT overrides it.",),
        (
            "how long will {svc} wait for {tech} before giving up",
            "what is the deadline on {tech} calls made by {svc}",
            "which variable sets {ENV}_TIMEOUT",
        ),
    ),
    (
        "fact",
        ("{Svc} listens on port {port} in {env}; its health check answers at /{obj}/healthz.",),
        ("what port does the {svc} backend bind to on {env}", "where do I reach {svc} in the {env} cluster"),
    ),
    (
        "decision",
        ("Decided that {svc} retries failed {tech} writes {k} times with exponential backoff, because {reason}.",),
        (
            "why does {svc} try {tech} writes again, and how often",
            "how many attempts before {svc} stops writing to {tech}",
        ),
    ),
    (
        "gotcha",
        ("Gotcha: {tool} in {project} needs --{flag} or it silently drops {obj}.",),
        (
            "{tool} loses {obj} without any error in {project}; which option fixes that",
            "why do {obj} vanish when {tool} runs on the {project} repo",
        ),
    ),
    (
        "convention",
        ("Convention: every {svc} handler validates input with {tech2} schemas before it touches {tech}.",),
        (
            "what do {svc} endpoints use to check incoming payloads",
            "rule for validating request bodies in {svc} before reaching {tech}",
        ),
    ),
    (
        "preference",
        ("The {team} team prefers {tech} over {tech2} for {obj}, per ADR-{n}.",),
        ("why {tech} rather than {tech2} for storing {obj}", "which does {team} favour for {obj}"),
    ),
    (
        "episode",
        (
            "Incident {n}: {svc} ran out of {res} connections during the {env} deploy; "
            "raising {ENV}_POOL to {k}0 fixed it.",
        ),
        (
            "what happened when {svc} exhausted its {res} pool",
            "the outage where {svc} had no {res} connections left in {env}",
            "incident {n} cause",
        ),
    ),
    (
        "reference",
        ("Reference: the {svc} runbook for {tech} failover lives at docs/runbooks/{svc}-{tech}-{n}.md.",),
        (
            "where is the document on failing over {tech} for {svc}",
            "instructions for switching {svc} to a standby {tech}",
        ),
    ),
    (
        "task",
        ("TODO: migrate the {svc} {obj} jobs from {tech2} to {tech} before release {v}.",),
        (
            "pending work to move {obj} jobs off {tech2} in {svc}",
            "what still has to change in the {svc} {obj} pipeline before {v} ships",
        ),
    ),
    (
        "open-question",
        ("Open question: should {svc} keep {obj} in {tech} or move them to {tech2}? {person} is pricing both.",),
        (
            "is it decided where {svc} stores its {obj} long term",
            "is anyone evaluating {tech2} for the {obj} of {svc}",
        ),
    ),
    (
        "fact",
        ("Error E{n} from {svc} means the {obj} token expired; clients must refresh it through /{obj}/renew.",),
        ("what does E{n} mean", "how to recover when {svc} says the {obj} credential is no longer valid"),
    ),
    (
        "fact",
        ("{Svc} caches {obj} in {tech} for {k} minutes; call invalidate_{obj}() after every write.",),
        ("how long do {obj} stay cached in {svc}", "which function clears stale {obj} in {svc}"),
    ),
    (
        "reference",
        ("To build {project} locally run `{tool} build --profile {env}`; the CI image pins {tool} {v}.",),
        ("command to compile {project} on my laptop", "what version of {tool} does the {project} pipeline use"),
    ),
    (
        "fact",
        ("{Person} owns the {svc} to {tech} integration; ask in #{team}-{svc} before changing it.",),
        (
            "who is responsible for how {svc} talks to {tech}",
            "where should I ask before touching the {tech} code in {svc}",
        ),
    ),
    (
        "fact",
        ("The {svc} {obj} export runs nightly at {hh}:15 UTC from a {tech} scheduled job.",),
        ("when does the nightly {obj} dump of {svc} happen", "what triggers the {obj} export of {svc} every night"),
    ),
    (
        "fact",
        ("{Svc} rejects {obj} larger than {k}{k} MB; the limit is set in config/{svc}/limits.yaml.",),
        ("maximum size of {obj} that {svc} accepts", "where is the upload cap for {obj} in {svc} configured"),
    ),
    (
        "gotcha",
        ("Gotcha: the {svc} integration tests need a running {tech}; start it with `{tool} up {tech}` or they hang.",),
        (
            "why do the {svc} integration tests freeze waiting for {tech}",
            "what has to be running before testing {svc} locally",
        ),
    ),
    (
        "decision",
        ("We dropped {tech2} from {project} in favour of {tech} because {reason}.",),
        ("why was {tech2} removed from {project}", "what replaced {tech2} in the {project} stack"),
    ),
    (
        "fact",
        ("The {flagname} feature flag gates the new {obj} flow in {svc}; it is on for {k}% of tenants.",),
        ("how far is the new {obj} flow of {svc} rolled out", "which toggle controls the new {obj} path in {svc}"),
    ),
    (
        "reference",
        ("{Svc} reads its {tech} credentials from vault path secret/{env}/{svc}/{tech} at startup.",),
        ("where does {svc} get its {tech} password in {env}", "secret location for {svc} access to {tech}"),
    ),
    (
        "gotcha",
        (
            "Gotcha: {tech2} clients newer than {v} break how {svc} serializes {obj}; "
            "the version is pinned in {project}.",
        ),
        ("why is the {tech2} client held back in {svc}", "upgrading the {tech2} library broke {obj} encoding in {svc}"),
    ),
    (
        "fact",
        ("The {svc} dashboard tracks {obj} lag in {tech}; the alert fires when it stays above {k}0 seconds.",),
        ("when does the lag alert of {svc} go off", "where to watch {obj} backlog for {svc}"),
    ),
    (
        "fact",
        ("{Svc} writes {obj} audit events to the {tech} topic {svc}.{obj}.audit.v{k}.",),
        ("where do the audit records of {svc} {obj} go", "which stream carries {svc} {obj} audit entries"),
    ),
    (
        "preference",
        ("{Person} prefers {style} in the {lang} code of {project}.",),
        ("coding style {person} wants for {lang} in {project}", "what does {person} ask for in {project} reviews"),
    ),
    (
        "convention",
        ("Convention: apply {tool} migrations for {svc} in the release job, never from the app at startup.",),
        ("when are schema changes of {svc} applied", "may {svc} migrate its own database when it boots"),
    ),
)


def _fill(template: str, slots: dict[str, str]) -> str:
    return template.format(**slots)


def _slots(rng: random.Random, n: int) -> dict[str, str]:
    svc = rng.choice(SERVICE_NAMES)
    tech, tech2 = rng.sample(TECHNOLOGIES, 2)
    person = rng.choice(PEOPLE)
    obj = rng.choice(OBJECTS)
    res = rng.choice(RESOURCES)
    return {
        "svc": svc,
        "Svc": svc.capitalize(),
        "tech": tech,
        "tech2": tech2,
        "tool": rng.choice(BUILD_TOOLS),
        "obj": obj,
        "project": rng.choice(PROJECTS),
        "person": person,
        "Person": person,
        "team": rng.choice(TEAMS),
        "env": rng.choice(ENVIRONMENTS),
        "res": res,
        "ENV": f"{svc.upper()}_{res.upper()}",
        "lang": rng.choice(LANGUAGES),
        "style": rng.choice(STYLES),
        "reason": rng.choice(REASONS),
        "flag": f"{rng.choice(('keep', 'allow', 'no', 'with', 'skip'))}-{obj}",
        "flagname": f"{svc}_{obj}_v{rng.randint(2, 5)}",
        "n": str(1000 + (n * 7919 + rng.randrange(997)) % 9000),
        "n2": str(rng.randint(2, 90)),
        "k": str(rng.randint(2, 9)),
        "port": str(rng.randint(3000, 9999)),
        "hh": f"{rng.randint(0, 23):02d}",
        "v": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}",
    }


def _note(index: int, seed: int) -> tuple[str, str, dict[str, str]]:
    rng = random.Random(f"{seed}:{index}")
    kind, notes, _ = TOPICS[rng.randrange(len(TOPICS))]
    slots = _slots(rng, index)
    extra = rng.choice(EXTRAS).format(n=rng.randint(100, 9999), person=rng.choice(PEOPLE), v=slots["v"])
    return _fill(rng.choice(notes), slots) + extra, kind, slots


def agent_notes(count: int, seed: int = 17) -> Iterator[tuple[str, str]]:
    """(content, kind) of ``count`` notes; the first N of a larger corpus are the corpus of size N.

    Two notes may come out with the same text: a caller that needs unique
    contents skips repeats (``unique_agent_notes``).
    """
    for index in range(count):
        content, kind, _ = _note(index, seed)
        yield content, kind


def unique_agent_notes(count: int, seed: int = 17) -> list[tuple[str, str]]:
    """The first ``count`` distinct notes, (content, kind), in order."""
    return [(content, kind) for _, content, kind in _distinct(count, seed)]


def paraphrase_queries(corpus_size: int, count: int = 300, seed: int = 17) -> list[tuple[str, str]]:
    """(query, target content) pairs: ``count`` paraphrases, each aimed at one note of the corpus."""
    notes = _distinct(corpus_size, seed)
    rng = random.Random(f"{seed}:queries:{corpus_size}")
    pairs = []
    for position in rng.sample(range(corpus_size), count):
        index, content, _ = notes[position]
        _, _, slots = _note(index, seed)
        paraphrases = TOPICS[random.Random(f"{seed}:{index}").randrange(len(TOPICS))][2]
        asked = dict(slots)
        for name in ("tech", "tech2"):
            # Half the questions name the technology by what it is, as people often do.
            if rng.random() < 0.5:
                asked[name] = "the " + CATEGORIES[slots[name]]
        pairs.append((_fill(rng.choice(paraphrases), asked).replace("the the ", "the "), content))
    return pairs


def _distinct(count: int, seed: int) -> list[tuple[int, str, str]]:
    """(generator index, content, kind) of the first ``count`` distinct notes."""
    seen: set[str] = set()
    notes: list[tuple[int, str, str]] = []
    index = 0
    while len(notes) < count:
        content, kind, _ = _note(index, seed)
        if content not in seen:
            seen.add(content)
            notes.append((index, content, kind))
        index += 1
    return notes
