"""Re-embedding after a model change: every vector made by another model is made again."""

from __future__ import annotations

from collections.abc import Callable

from zero_memory.app import App
from zero_memory.store import system_tx

BATCH = 256


def stale_count(app: App, *, everything: bool = False) -> int:
    with system_tx(app.store, "reindex") as tx:
        models = tx.embedding_models()
    return sum(n for model, n in models.items() if everything or model != app.embedder.model_id)


def reindex(app: App, *, everything: bool = False, advance: Callable[[int], None] = lambda n: None) -> int:
    """Re-embed memories whose vector came from another model (or all); return how many."""
    model = app.embedder.model_id
    done, after = 0, ""
    while True:
        with system_tx(app.store, "reindex") as tx:
            chunk = tx.texts_to_embed(unless_model=None if everything else model, after=after, limit=BATCH)
        if not chunk:
            break
        vectors = app.embedder.embed([text for _, text in chunk])
        with system_tx(app.store, "reindex", write=True) as tx:
            for (memory_id, _), vector in zip(chunk, vectors, strict=True):
                tx.update_embedding(memory_id, vector, model)
            tx.add_audit(
                actor="system",
                action="db.reindex",
                owner=None,
                memory_ids=[],
                payload={"count": len(chunk), "model": model},
                run_id=None,
                at=app.clock(),
            )
        done += len(chunk)
        after = chunk[-1][0]
        advance(len(chunk))
    return done
