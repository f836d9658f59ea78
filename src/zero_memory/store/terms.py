"""The words of a text, as both stores' full-text indexes see them.

A word is a run of letters and digits: punctuation, underscores included,
separates words, as in SQLite's ``unicode61`` tokenizer and in the PostgreSQL
``tsvector``, which is built from the text with ASCII punctuation blanked (so
its parser keeps no paths, hosts or version numbers whole). Function words
match nearly every memory and carry no signal, yet a search must visit every
row they match; queries leave them out.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)  # a word character: one for which ``str.isalnum`` holds
MAX_TERMS = 16

STOPWORDS = frozenset(
    (
        "a",
        "about",
        "after",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "der",
        "die",
        "das",
        "und",
        "ist",
        "nicht",
        "ein",
        "eine",
        "zu",
        "den",
        "mit",
        "von",
        "le",
        "la",
        "les",
        "et",
        "est",
        "un",
        "une",
        "des",
        "du",
        "en",
        "pour",
        "que",
        "el",
        "los",
        "las",
        "y",
    )
)


def terms(query: str) -> list[str]:
    """Distinct lowercase words of a query, function words and single letters left out."""
    seen: dict[str, None] = {}
    for word in WORD_RE.findall(query.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def words_of(text: str) -> frozenset[str]:
    """Every distinct lowercase word of a text (stop words included): what a stored memory contains."""
    return frozenset(WORD_RE.findall(text.lower()))
