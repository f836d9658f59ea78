-- The capture stream: transcript chunks staged for extraction, and each owner's daily token allowance.
-- A chunk's text is held only while extraction needs it: it is cleared when the chunk is done or
-- given up. The row stays, so the same chunk sent again is recognised (one row per owner and hash).

CREATE TABLE capture_chunks (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    chunk_hash TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    client TEXT NOT NULL,
    scope TEXT NOT NULL,
    transcript TEXT,
    chars INTEGER NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_until TEXT,
    last_error TEXT,
    statements INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL DEFAULT 0,
    yielded INTEGER NOT NULL DEFAULT 0,
    absorbed INTEGER NOT NULL DEFAULT 0,
    refused INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    finished_at TEXT,
    UNIQUE (owner, chunk_hash)
);
CREATE INDEX capture_chunks_due ON capture_chunks(status, next_attempt_at);
CREATE INDEX capture_chunks_owner ON capture_chunks(owner, created_at);

CREATE TABLE capture_budgets (
    user_id TEXT PRIMARY KEY REFERENCES users(id),
    daily_tokens INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
