-- The passes of a full cycle: re-examination guards and portability candidacies.

CREATE TABLE rescan_guards (
    memory_id TEXT COLLATE "C" NOT NULL,
    model TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    outcome TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (memory_id, model)
);

CREATE TABLE portability_candidates (
    id TEXT COLLATE "C" PRIMARY KEY,
    memory_id TEXT COLLATE "C" NOT NULL UNIQUE,
    owner TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    confidence DOUBLE PRECISION,
    rationale TEXT COLLATE "C",
    model TEXT COLLATE "C",
    original_scope TEXT COLLATE "C" NOT NULL,
    run_id TEXT COLLATE "C",
    created_at TEXT COLLATE "C" NOT NULL,
    resolved_at TEXT COLLATE "C",
    resolved_by TEXT COLLATE "C"
);
CREATE INDEX portability_owner_status ON portability_candidates(owner, status, created_at);
