"""Builders for the end-to-end hygiene tests: similar pairs, a judge that answers per pair, a cycle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank, content_hash
from zero_memory.domain.records import Run
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.ids import memory_id
from zero_memory.judge.fake import FakeAnswer, FakeJudge
from zero_memory.judge.questions.portability import PortabilityRequest

# Pairs that really are similar for the bundled model (cosine 0.76 to 0.97), and
# unlike each other (below 0.4, under the sweep floor of 0.48).
TOPICS: list[tuple[str, str]] = [
    ("The staging database is green", "The staging database is blue"),
    ("The api listens on port 8080", "The api listens on port 9090"),
    ("Deploys go through the release pipeline on Fridays", "Deploys go through the release pipeline on Mondays"),
    ("The web app is built with React 18", "The web app is built with React 19"),
    ("Alice prefers tabs for indentation", "Alice prefers spaces for indentation"),
    ("Our CI runner uses Ubuntu 22.04", "Our CI runner uses Ubuntu 24.04"),
]
GREEN, BLUE = TOPICS[0]


def judge_by_pair(
    answers: Mapping[tuple[str, str], FakeAnswer | Sequence[FakeAnswer]] | None = None,
    *,
    default: FakeAnswer = "unrelated",
    portable: FakeAnswer = False,
    model: str = "fake-strong",
    fast_model: str = "fake-fast",
) -> FakeJudge:
    """A fake that answers each pair (by its two texts, in either order) from a script.

    A list is consumed one answer per call and its last answer then repeats;
    portability questions get ``portable``.
    """
    scripts: dict[frozenset[str], list[FakeAnswer]] = {}
    for texts, script in (answers or {}).items():
        listed = list(script) if isinstance(script, list) else [script]
        scripts[frozenset(texts)] = listed  # type: ignore[assignment]

    def answer(request: Any) -> FakeAnswer:
        if isinstance(request, PortabilityRequest):
            return portable
        script = scripts.get(frozenset((request.a.content, request.b.content)))
        if not script:
            return default
        return script.pop(0) if len(script) > 1 else script[0]

    return FakeJudge(answer, model=model, fast_model=fast_model)


def factory(judge: FakeJudge) -> Any:
    return lambda owner, run_id: judge


def two(
    app: App,
    caller: Caller,
    texts: tuple[str, str] = (GREEN, BLUE),
    *,
    kinds: tuple[str, str] = ("fact", "fact"),
    provisional: tuple[bool, bool] = (False, False),
    **fields: Any,
) -> tuple[str, str]:
    """Write an older and a newer memory; return their ids."""
    ids = []
    for text, kind, prov in zip(texts, kinds, provisional, strict=True):
        result = write(app, caller, text, kind=kind, provisional=prov, **fields)
        assert result.status == "created", result
        ids.append(result.id)
    return ids[0], ids[1]


def human(app: App, content: str, kind: Kind = Kind.FACT, owner: str = "alice") -> str:
    """A rank-2 memory, as the dashboard's merge writes one."""
    now = app.clock()
    memory = Memory(
        id=memory_id(),
        owner=owner,
        scope=f"user.{owner}",
        kind=kind,
        content=content,
        content_hash=content_hash(content),
        author_kind=AuthorKind.HUMAN,
        agent_name="dashboard",
        rank=Rank.HUMAN,
        source={},
        created_at=now,
        updated_at=now,
    )
    with app.store.tx(write=True) as tx:
        tx.insert_memory(memory, app.embedder.embed([content])[0], app.embedder.model_id)
    return memory.id


def cycle(app: App, owner: str = "alice", **options: Any) -> tuple[Run, dict[str, Any]]:
    run, summary = start_cycle(app, owner, started_by="test", wait=True, **options)
    assert summary is not None
    return run, summary
