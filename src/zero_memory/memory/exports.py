"""Full export of the memories a caller can see: JSONL (re-importable) or Markdown."""

from __future__ import annotations

import json
from collections.abc import Iterator

from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.domain.memory import Memory


def visible_memories(app: App, caller: Caller) -> Iterator[tuple[Memory, list[dict[str, str]]]]:
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        for memory in tx.iter_memories():
            if vis.can_read(memory.scope):
                links = [
                    {"type": lk.type, "src": lk.src, "dst": lk.dst}
                    for lk in tx.links_of(memory.id)
                    if lk.src == memory.id
                ]
                yield memory, links


def as_record(memory: Memory, links: list[dict[str, str]]) -> dict[str, object]:
    return {
        "id": memory.id,
        "content": memory.content,
        "kind": memory.kind.value,
        "scope": memory.scope,
        "owner": memory.owner,
        "rank": int(memory.rank),
        "author_kind": memory.author_kind.value,
        "agent_name": memory.agent_name,
        "source": memory.source,
        "status": memory.status.value,
        "invalidated_reason": memory.invalidated_reason.value if memory.invalidated_reason else None,
        "superseded_by": memory.superseded_by,
        "created_at": to_text(memory.created_at),
        "updated_at": to_text(memory.updated_at),
        "links": links,
    }


def jsonl_lines(app: App, caller: Caller) -> Iterator[str]:
    for memory, links in visible_memories(app, caller):
        yield json.dumps(as_record(memory, links), ensure_ascii=False)


def markdown(app: App, caller: Caller) -> Iterator[str]:
    yield "# zero-memory export\n"
    for memory, _ in visible_memories(app, caller):
        state = "" if memory.live else f" · {memory.status.value} ({memory.invalidated_reason})"
        yield f"\n## {memory.kind.value} · {memory.scope}{state}\n\n<!-- {memory.id} -->\n\n{memory.content}\n"
