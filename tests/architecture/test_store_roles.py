"""The store keeps its roles apart: adapters on the shared SQL, the shared SQL on the port's families.

Declared once in pyproject.toml (the "Store by role" contract) and checked by
import-linter. A copy of the package with one wrong import planted per rule
shows the contract catching each: an adapter reaching into the other, the
shared queries reaching into an adapter, a family of the port reaching into
the shared SQL. A domain type may not reach the store at all (the layers).
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.test_imports import PACKAGE, lint_imports, lint_planted

# module (path under the package) -> the import planted in it
PLANTED = {
    "store/sqlite/adapter.py": "zero_memory.store.postgres.params",
    "store/queries/memories.py": "zero_memory.store.sqlite.vectors",
    "store/ports/review.py": "zero_memory.store.queries.review",
    "domain/records.py": "zero_memory.store.base",
}


def test_the_store_contract_is_kept() -> None:
    result = lint_imports()
    assert "Store by role KEPT" in result.stdout, result.stdout + result.stderr


def test_an_import_across_the_store_s_roles_breaks_a_contract(tmp_path: Path) -> None:
    broken = lint_planted(tmp_path, {_module(path): planted for path, planted in PLANTED.items()})
    assert broken.returncode != 0
    assert "Store by role BROKEN" in broken.stdout
    assert "Layers BROKEN" in broken.stdout  # the domain type reaching the store
    for path, planted in PLANTED.items():
        assert f"{_module(path)} -> {planted}" in broken.stdout, (path, broken.stdout)


def _module(path: str) -> str:
    return f"{PACKAGE}.{path.removesuffix('.py').replace('/', '.')}"
