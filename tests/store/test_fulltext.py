"""Full-text search: any word matches, within scopes, live rows only."""

from __future__ import annotations

import pytest

from tests.store.factories import add_users, at, memory, put
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store import Store
from zero_memory.store.ports.reader import SYSTEM

API = "proj.alice.api"


@pytest.fixture
def corpus(store: Store) -> dict[str, str]:
    rows = {
        "port": memory("The API listens on port 8080 behind nginx."),
        "deploy": memory("Deploys run from the release branch; nginx reloads after."),
        "tests": memory("Run the tests with pytest before pushing."),
        "personal": memory("I prefer pytest over unittest.", scope="user.alice"),
        "gone": memory("nginx used to listen on 80.", status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN),
        "cyrillic": memory("Ошибка сборки: проверьте ПУТЬ к компилятору."),
        "german": memory("Die Größe der Datei überschreitet das Limit."),
        "japanese": memory("東京タワー の 設定 は 別 ファイル です"),
    }
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for m in rows.values():
            put(tx, m)
    return {m.id: name for name, m in rows.items()}


def search(
    store: Store, names: dict[str, str], query: str, scopes: list[str] | None = None, limit: int = 10
) -> set[str]:
    with store.tx() as tx:
        return {names[i] for i in tx.fulltext(query, scopes=[API] if scopes is None else scopes, limit=limit)}


def test_any_word_of_the_query_matches(store: Store, corpus: dict[str, str]) -> None:
    assert search(store, corpus, "nginx") == {"port", "deploy"}
    assert search(store, corpus, "PYTEST kubernetes") == {"tests"}
    assert search(store, corpus, "pytest port") == {"tests", "port"}
    assert search(store, corpus, "kubernetes") == set()


def test_a_row_matching_more_words_ranks_first(store: Store, corpus: dict[str, str]) -> None:
    with store.tx() as tx:
        ids = tx.fulltext("nginx port listens", scopes=[API], limit=10)
    assert [corpus[i] for i in ids] == ["port", "deploy"]


def test_only_the_scopes_asked_are_searched(store: Store, corpus: dict[str, str]) -> None:
    assert search(store, corpus, "pytest", scopes=["user.alice"]) == {"personal"}
    assert search(store, corpus, "pytest", scopes=[API, "user.alice"]) == {"tests", "personal"}
    assert search(store, corpus, "pytest", scopes=[]) == set()


def test_invalidated_memories_are_not_found(store: Store, corpus: dict[str, str]) -> None:
    assert "gone" not in search(store, corpus, "listen nginx")
    with store.tx(write=True) as tx:
        port = next(i for i, n in corpus.items() if n == "port")
        tx.set_status(port, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(1))
    assert search(store, corpus, "nginx") == {"deploy"}


def test_unicode_words_match_in_any_case(store: Store, corpus: dict[str, str]) -> None:
    assert search(store, corpus, "ошибка") == {"cyrillic"}
    assert search(store, corpus, "путь") == {"cyrillic"}
    assert search(store, corpus, "größe") == {"german"}
    assert search(store, corpus, "東京タワー") == {"japanese"}


def test_the_limit_caps_the_ids(store: Store, corpus: dict[str, str]) -> None:
    assert len(search(store, corpus, "nginx pytest", limit=2)) == 2


def test_query_syntax_is_only_words(store: Store, corpus: dict[str, str]) -> None:
    assert search(store, corpus, 'nginx & !port | "tests" :* (') == {"port", "deploy", "tests"}
    assert search(store, corpus, "' OR 1=1 --") == set()
    assert search(store, corpus, "!!! ... ") == set()
    assert search(store, corpus, "") == set()


def test_a_moved_memory_is_found_in_its_new_scope_only(store: Store, corpus: dict[str, str]) -> None:
    tests = next(i for i, n in corpus.items() if n == "tests")
    with store.tx(write=True) as tx:
        tx.set_scope(tests, "user.alice", API, at(2))
    assert search(store, corpus, "pytest", scopes=[API]) == set()
    assert search(store, corpus, "pytest", scopes=["user.alice"]) == {"tests", "personal"}


def test_words_of_a_memory_written_later_are_found(store: Store, corpus: dict[str, str]) -> None:
    later = memory("Kubernetes pods restart after an OOM kill.")
    with store.tx(write=True) as tx:
        put(tx, later)
    corpus[later.id] = "later"
    assert search(store, corpus, "kubernetes oom") == {"later"}


def test_live_rows_ranked_behind_many_gone_ones_are_found_in_rank_order(store: Store) -> None:
    """The ranking is read a slice at a time: the newest rows holding the word are gone, for more slices than
    one, and the live ones behind them still come, newest first, as many as asked."""
    rows = []
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(30):
            gone = n >= 8
            status = Status.INVALIDATED if gone else Status.LIVE
            reason = InvalidationReason.FORGOTTEN if gone else None
            rows.append(put(tx, memory(f"The quokka note {n}", minutes=n, status=status, reason=reason)))
    with store.tx() as tx:
        found = tx.fulltext("quokka", scopes=[API], limit=3)
        plan = tx.text_plan("quokka")
        briefs = tx.text_briefs(plan, scopes=[API], limit=3, reader=SYSTEM)
    assert found == [rows[7].id, rows[6].id, rows[5].id]
    assert list(briefs) == found
