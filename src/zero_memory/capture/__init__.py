"""The capture stream: conversation chunks in, provisional memories out.

Agents and people state memories (rank 1–2); capture produces the second,
high-volume stream (rank 0) from what was said. In the order data flows:

    ingest.py      accept a chunk: the content guard, the budget, the target, the staging row
    extract.py     one chunk through the extraction model, each statement through the write path
    route.py       pure decisions: where a statement goes, what a failed attempt leads to
    budget.py      each owner's daily token allowance
    worker.py      retries due chunks in a long-running server
    transcripts.py the text of Claude Code and Codex transcripts (user and assistant words only)
    hooks.py       the client hooks: send the new part of a session, once

A chunk is answered at once and extracted in the background; its text stays
in the staging table only until extraction is done or given up. Every
statement is an ordinary provisional write, so the authority cascade and the
provenance rule of the hygiene pipeline keep captures below what was stated.
"""
