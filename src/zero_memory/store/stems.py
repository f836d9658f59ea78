"""Words as people write them: the stem both stores index and both look up.

"deploys", "deployed" and "deployment" are one word to a reader. Each
store's full-text index holds the Snowball English stem of every word of a
memory ("deploy" for all three), and a query's words are stemmed the same
way, so a query finds its words' inflections with one lookup a word:

- SQLite indexes ``stemmed(content)``, called from its triggers as the SQL
  function ``zm_stems`` (registered on every connection, store/sqlite/adapter.py);
- PostgreSQL's ``content_tsv`` is built with the ``zm_stems`` text-search
  configuration (migration 0025): the same Snowball English stemmer, built
  into PostgreSQL, for words of letters, and the ``simple`` one (as written,
  lowercased) for the rest. The two agree on every word of the benchmarks'
  corpora (4,300 distinct words, non-ASCII ones included).

Only words of letters are stemmed: identifiers, numbers and codes ("e4711",
"8080") stay as written. The content's language is not known, so English is
the language stemmed; a word of another language is at worst cut by an
English ending, the same way in the memory and in the query.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import Stemmer

from zero_memory.store.terms import WORD_RE

LANGUAGE = "english"
_local = threading.local()  # a Stemmer object is not safe to share between threads


def _stemmer() -> Stemmer.Stemmer:
    stemmer: Stemmer.Stemmer | None = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer(LANGUAGE)
    return stemmer


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The stem of one lowercase word: a word of letters stemmed, any other as it is."""
    return str(_stemmer().stemWord(word)) if word.isalpha() else word


def stems_of(text: str) -> list[str]:
    """The stems of a text's words, in order, repeats kept (a word counts as often as it occurs)."""
    return [stem(word) for word in WORD_RE.findall(text.lower())]


def stemmed(text: str | None) -> str:
    """What SQLite's full-text index holds of a text: its stems, separated by spaces."""
    return " ".join(stems_of(text)) if text else ""
