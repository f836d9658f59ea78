"""The word cache carries what it holds forward while rows only arrive, and starts again on any other change."""

from __future__ import annotations

import sqlite3

from zero_memory.store.sqlite.word_cache import WordCache


class FakeRows:
    """Rows numbered 1..top, each holding the words listed; ``touched`` rows were changed after ``since``."""

    conn: sqlite3.Connection

    def __init__(self) -> None:
        self.words: dict[int, set[str]] = {}
        self.touched_at: dict[int, int] = {}  # row -> the counter value of its last change
        self.reads: list[tuple[str, int]] = []

    def top_seq(self) -> int:
        return max(self.words, default=0)

    def grown_only(self, rev: int, top: int) -> bool:
        return not any(at > rev and seq <= top for seq, at in self.touched_at.items())

    def add(self, rev: int, *words: str) -> None:
        seq = self.top_seq() + 1
        self.words[seq] = set(words)
        self.touched_at[seq] = rev

    def rewrite(self, rev: int, seq: int, *words: str) -> None:
        self.words[seq] = set(words)
        self.touched_at[seq] = rev


def holding(rows: FakeRows, word: str, after: int) -> list[int]:
    rows.reads.append((word, after))
    return [seq for seq, words in sorted(rows.words.items()) if seq > after and word in words]


def cache() -> WordCache[list[int]]:
    return WordCache(holding, lambda kept, above: kept + above, len, limit=100)  # type: ignore[arg-type]


def test_a_word_is_read_once_while_the_counter_stays() -> None:
    rows, words = FakeRows(), cache()
    rows.add(1, "zebra")
    assert words.lookup(1, rows, "zebra") == [1]
    assert words.lookup(1, rows, "zebra") == [1]
    assert rows.reads == [("zebra", 0)]


def test_rows_that_arrive_are_read_alone_and_joined_to_what_is_kept() -> None:
    rows, words = FakeRows(), cache()
    rows.add(1, "zebra")
    rows.add(2, "lion")
    assert words.lookup(2, rows, "zebra") == [1]
    rows.add(3, "zebra", "lion")
    rows.add(4, "zebra")
    assert words.lookup(4, rows, "zebra") == [1, 3, 4]
    assert rows.reads == [("zebra", 0), ("zebra", 2)]
    assert words.top(4, rows) == 4


def test_any_other_change_starts_the_cache_again() -> None:
    rows, words = FakeRows(), cache()
    rows.add(1, "zebra")
    rows.add(2, "zebra")
    assert words.lookup(2, rows, "zebra") == [1, 2]
    rows.rewrite(3, 1, "lion")
    assert words.lookup(3, rows, "zebra") == [2]
    assert rows.reads == [("zebra", 0), ("zebra", 0)]


def test_a_transaction_behind_the_cache_reads_and_keeps_nothing() -> None:
    rows, words = FakeRows(), cache()
    rows.add(1, "zebra")
    words.lookup(1, rows, "zebra")
    rows.add(2, "zebra")
    words.lookup(2, rows, "zebra")
    assert words.lookup(1, rows, "zebra") == [1, 2]  # the fake has no snapshots: what matters is the read
    assert rows.reads[-1] == ("zebra", 0)
    assert words.kept(1, "zebra") is None and words.kept(2, "zebra") == [1, 2]


def test_past_its_limit_the_cache_starts_again_with_the_word_read() -> None:
    rows = FakeRows()
    words: WordCache[list[int]] = WordCache(holding, lambda kept, above: kept + above, len, limit=3)  # type: ignore[arg-type]
    for _ in range(3):
        rows.add(1, "zebra", "lion")
    assert words.lookup(1, rows, "zebra") == [1, 2, 3]
    assert words.lookup(1, rows, "lion") == [1, 2, 3]
    assert words.kept(1, "zebra") is None
    assert words.kept(1, "lion") == [1, 2, 3]
