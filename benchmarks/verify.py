"""Verifying thousands of anchored memories after a day of commits, beside re-hashing every anchor.

    pip download --no-deps --no-binary :all: django==5.1.4 && tar xzf Django-5.1.4.tar.gz
    python benchmarks/verify.py --source Django-5.1.4 [--memories 5000] [--commits 50] [--files-per-commit 3]

The source tree (any sizeable Python or TypeScript project; an sdist unpacks to one) is committed to a fresh
git repository, and ``--memories`` memories of one project are anchored to symbols drawn from its files, each
stamped at that commit as ``remember`` stamps them. Then ``--commits`` commits change the code as a working
day does: each edits ``--files-per-commit`` files (a line added inside a function, anchored or not), and every
tenth renames a file with ``git mv``. Timed, one after the other on the same repository and store:

- ``zm verify``'s work (workspace/check.py, then memory/verification.apply): git names what changed since the
  anchors' commit, and only those files are read and parsed;
- a full re-hash: every anchored file read and parsed, every anchored region hashed, as a verifier that does
  not ask git would.

Both must find the same outcomes; the benchmark prints their times, the files each read and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project
from zero_memory.access.users import add_user
from zero_memory.bootstrap import build_app
from zero_memory.clock import utcnow
from zero_memory.domain.anchors import AnchorRecord, AnchorState, Origin, Unchanged, region_hash
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.ids import memory_id
from zero_memory.memory.verification import Report, anchors_of_project, apply
from zero_memory.settings import Settings
from zero_memory.store import system_tx
from zero_memory.workspace import symbols
from zero_memory.workspace.check import Checker
from zero_memory.workspace.git import Repository

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
}
ALICE = Caller("alice", client="bench")


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], env=GIT_ENV, capture_output=True, text=True, check=True
    ).stdout


def definitions(root: Path, files: list[str]) -> list[tuple[str, str, str]]:
    """(path, symbol, region text) of every definition of the source files."""
    found = []
    for path in files:
        text = (root / path).read_text(errors="replace")
        found += [(path, name, region.text) for name, region in symbols.regions(path, text).items()]
    return found


def day_of_commits(root: Path, files: list[str], commits: int, per_commit: int, rng: random.Random) -> int:
    """Edits inside functions of random files, and a ``git mv`` every tenth commit; the files touched."""
    touched: set[str] = set()
    live = list(files)
    for number in range(commits):
        for path in rng.sample(live, per_commit):
            lines = (root / path).read_text(errors="replace").split("\n")
            bodies = [i for i, line in enumerate(lines) if line.startswith("    return ")]
            at = rng.choice(bodies) if bodies else len(lines) - 1
            lines.insert(at, lines[at][: len(lines[at]) - len(lines[at].lstrip())] + f"pass  # edit {number}")
            (root / path).write_text("\n".join(lines))
            touched.add(path)
        if number % 10 == 9:
            old = rng.choice(live)
            new = old.replace(".py", f"_moved{number}.py")
            git(root, "mv", old, new)
            live[live.index(old)] = new
            touched.add(old)
        git(root, "commit", "-qam", f"work {number}")
    return len(touched)


def full_rehash(repository: Repository, records: list[AnchorRecord]) -> tuple[int, int]:
    """Every anchored file read and parsed, every region hashed: (files read, regions that differ)."""
    by_file: dict[str, list[AnchorRecord]] = {}
    for record in records:
        by_file.setdefault(record.path, []).append(record)
    differ = 0
    for path, anchored in by_file.items():
        source = repository.read(path) or ""
        regions = symbols.regions(path, source)
        for record in anchored:
            region = regions.get(record.symbol or "")
            if region is None or region_hash(region.text) != record.content_hash:
                differ += 1
    return len(by_file), differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="a source tree (an unpacked sdist)")
    parser.add_argument("--memories", type=int, default=5_000)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--files-per-commit", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="zm-verify-"))
    root = work / "repo"
    shutil.copytree(args.source, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "import")
    head = git(root, "rev-parse", "HEAD").strip()
    files = sorted(p for p in git(root, "ls-files").split("\n") if p.endswith((".py", ".ts", ".js")))
    found = definitions(root, files)
    chosen = rng.sample(found, min(args.memories, len(found)))

    home = work / "home"
    app = build_app(Settings.from_environ({"ZM_HOME": str(home), "ZM_USER": "alice"}), embedder=HashingEmbedder(dim=64))
    now = utcnow()
    embedder = HashingEmbedder(dim=64)
    with system_tx(app.store, "bench", write=True) as tx:
        add_user(tx, "alice", is_local=True)
        create_project(tx, "alice", "bench", path=str(root))
        rows = []
        for path, name, _text in chosen:
            memory = Memory(
                id=memory_id(),
                owner="alice",
                scope="proj.alice.bench",
                kind=Kind.FACT,
                content=f"{name} in {path} is worth knowing",
                author_kind=AuthorKind.AGENT,
                agent_name="bench",
                rank=Rank.AGENT,
                source={},
                created_at=now,
                updated_at=now,
            )
            rows.append((memory, embedder.embed([memory.content])[0]))
        tx.insert_memories(rows, embedder.model_id)
        for (memory, _), (path, name, text) in zip(rows, chosen, strict=True):
            record = AnchorRecord(
                memory.id, path, name, Origin.EXPLICIT, AnchorState.VERIFIED, "bench", head, region_hash(text), now
            )
            tx.set_anchors(memory.id, [record], now)

    touched = day_of_commits(root, files, args.commits, args.files_per_commit, rng)
    repository = Repository.at(root)
    assert repository is not None
    target = repository.head() or ""
    load_before = os.getloadavg()

    started = time.perf_counter()
    records = anchors_of_project(app, ALICE, "proj.alice.bench")
    read_at = time.perf_counter()
    checker = Checker(repository)
    reports = [Report(record, outcome) for record, outcome in checker.check_all(records)]
    checked_at = time.perf_counter()
    result = apply(app, ALICE, "proj.alice.bench", reports, target=target, repository="bench")
    applied_at = time.perf_counter()

    rehash_started = time.perf_counter()
    rehash_files, rehash_differ = full_rehash(repository, records)
    rehash_seconds = time.perf_counter() - rehash_started
    load_after = os.getloadavg()
    not_unchanged = sum(1 for r in reports if not isinstance(r.outcome, Unchanged))
    figures = {
        "source": Path(args.source).name,
        "files": len(files),
        "definitions": len(found),
        "anchors": len(records),
        "commits": args.commits,
        "files_touched": touched,
        "verify_seconds": round(applied_at - started, 3),
        "verify_read_anchors_s": round(read_at - started, 3),
        "verify_check_s": round(checked_at - read_at, 3),
        "verify_apply_s": round(applied_at - checked_at, 3),
        "verify_files_read": checker.files_read,
        "found_not_unchanged": not_unchanged,
        "stamped": result.stamped,
        "reanchored": result.reanchored,
        "raised": result.raised,
        "rehash_seconds": round(rehash_seconds, 3),
        "rehash_files_read": rehash_files,
        "rehash_differ": rehash_differ,
        "load": [round(x, 2) for x in (*load_before[:1], *load_after[:1])],
    }
    app.close()
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:>24}: {value}")


if __name__ == "__main__":
    sys.exit(main())
