-- Anchors: where in its project's repository the code a memory describes lives. A path from the repository's
-- root and a symbol in it ('' for the whole file), what the server last verified of it (the repository's
-- identity, the commit, a hash of the region) and what the latest verification found (state, drift, and where
-- the code it found now is: upholding the memory's outdated row re-anchors it there). Rows
-- follow their memory: removed with it by an account deletion, copied with it by zm db copy.

CREATE TABLE memory_anchors (
    memory_id TEXT NOT NULL,
    path TEXT NOT NULL,
    symbol TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL,
    state TEXT NOT NULL,
    repository TEXT,
    verified_commit TEXT,
    content_hash TEXT,
    verified_at TEXT,
    drift TEXT,
    observed_path TEXT,
    observed_symbol TEXT,
    observed_hash TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, path, symbol)
);
