-- Anchors: where in its project's repository the code a memory describes lives. A path from the repository's
-- root and a symbol in it ('' for the whole file), what the server last verified of it (the repository's
-- identity, the commit, a hash of the region) and what the latest verification found (state, drift, and where
-- the code it found now is: upholding the memory's outdated row re-anchors it there). Rows
-- follow their memory: visible and writable with it (anyone who reads a memory may report what its code
-- became), removed with it by an account deletion, copied with it by zm db copy.

CREATE TABLE memory_anchors (
    memory_id TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    symbol TEXT COLLATE "C" NOT NULL DEFAULT '',
    origin TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    repository TEXT COLLATE "C",
    verified_commit TEXT COLLATE "C",
    content_hash TEXT COLLATE "C",
    verified_at TEXT COLLATE "C",
    drift TEXT COLLATE "C",
    observed_path TEXT COLLATE "C",
    observed_symbol TEXT COLLATE "C",
    observed_hash TEXT COLLATE "C",
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (memory_id, path, symbol)
);

ALTER TABLE memory_anchors ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_anchors FORCE ROW LEVEL SECURITY;
CREATE POLICY memory_anchors_caller ON memory_anchors
    USING (zm_system() OR zm_memory_visible(memory_id))
    WITH CHECK (zm_system() OR zm_memory_visible(memory_id));
