-- The passes of a full cycle: re-examination guards and portability candidacies.

CREATE TABLE rescan_guards (
    memory_id TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (memory_id, model)
);

CREATE TABLE portability_candidates (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    confidence REAL,
    rationale TEXT,
    model TEXT,
    original_scope TEXT NOT NULL,
    run_id TEXT,
    created_at TEXT NOT NULL,
    resolved_at TEXT,
    resolved_by TEXT
);
CREATE INDEX portability_owner_status ON portability_candidates(owner, status, created_at);
