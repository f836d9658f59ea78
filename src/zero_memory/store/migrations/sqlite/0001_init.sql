-- zero-memory schema, SQLite dialect. Timestamps are ISO-8601 UTC text, JSON is text,
-- booleans are 0/1: the PostgreSQL schema uses the same representations so both
-- stores behave the same.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    is_local INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id),
    token_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX tokens_user ON tokens(user_id);

CREATE TABLE provider_keys (
    user_id TEXT NOT NULL REFERENCES users(id),
    provider TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (user_id, provider)
);

CREATE TABLE projects (
    scope TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users(id),
    kind TEXT NOT NULL,
    slug TEXT NOT NULL,
    path TEXT,
    remote TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX projects_path ON projects(path);
CREATE INDEX projects_remote ON projects(remote);

CREATE TABLE memberships (
    scope TEXT NOT NULL REFERENCES projects(scope),
    user_id TEXT NOT NULL REFERENCES users(id),
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters(name, value) VALUES ('rev', 0);

CREATE TABLE memories (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL REFERENCES users(id),
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    author_kind TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    rank INTEGER NOT NULL,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by TEXT,
    invalidated_reason TEXT,
    original_scope TEXT,
    session_key TEXT,
    embedding BLOB,
    embedding_model TEXT,
    embedding_dim INTEGER,
    rev INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_owner_created ON memories(owner, created_at);
CREATE INDEX memories_scope_status ON memories(scope, status);
CREATE INDEX memories_hash ON memories(owner, content_hash, created_at);
CREATE INDEX memories_rev ON memories(rev);

-- Every change of a memory row takes the next value of the 'rev' counter, so
-- the in-process vector index can follow changes made by any process.
CREATE TRIGGER memories_rev_insert AFTER INSERT ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'rev';
    UPDATE memories SET rev = (SELECT value FROM counters WHERE name = 'rev') WHERE seq = NEW.seq;
END;
CREATE TRIGGER memories_rev_update AFTER UPDATE OF status, scope, owner, embedding, content ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'rev';
    UPDATE memories SET rev = (SELECT value FROM counters WHERE name = 'rev') WHERE seq = NEW.seq;
END;

CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, content='memories', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row');

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (NEW.seq, NEW.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', OLD.seq, OLD.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', OLD.seq, OLD.content);
    INSERT INTO memories_fts(rowid, content) VALUES (NEW.seq, NEW.content);
END;

CREATE TABLE links (
    id TEXT PRIMARY KEY,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    run_id TEXT,
    removed_at TEXT
);
CREATE INDEX links_src ON links(src);
CREATE INDEX links_dst ON links(dst);

CREATE TABLE audit (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    owner TEXT,
    memory_ids TEXT NOT NULL,
    payload TEXT NOT NULL,
    run_id TEXT
);
CREATE INDEX audit_run ON audit(run_id);
CREATE INDEX audit_action ON audit(action, at);

CREATE TABLE audit_memories (
    audit_seq INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (memory_id, audit_seq)
);

CREATE TABLE disputes (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    shape TEXT NOT NULL,
    verdict TEXT NOT NULL,
    direction TEXT,
    confidence REAL,
    rationale TEXT,
    model TEXT,
    origin TEXT NOT NULL,
    status TEXT NOT NULL,
    memory_a TEXT NOT NULL,
    memory_b TEXT,
    pair_key TEXT,
    reason TEXT,
    run_id TEXT,
    created_at TEXT NOT NULL,
    resolved_at TEXT,
    resolved_by TEXT,
    resolution TEXT
);
CREATE UNIQUE INDEX disputes_pair ON disputes(pair_key) WHERE pair_key IS NOT NULL;
CREATE INDEX disputes_owner_status ON disputes(owner, status, created_at);
CREATE INDEX disputes_a ON disputes(memory_a);
CREATE INDEX disputes_b ON disputes(memory_b);

CREATE TABLE judgements (
    pair_key TEXT NOT NULL,
    model TEXT NOT NULL,
    verdict TEXT NOT NULL,
    confidence REAL NOT NULL,
    rationale TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (pair_key, model)
);

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    owner TEXT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    dry_run INTEGER NOT NULL DEFAULT 0,
    started_by TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    heartbeat_at TEXT,
    summary TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_started ON runs(started_at);

CREATE TABLE sessions (
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    attached_scope TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (owner, session_id)
);

CREATE TABLE usage_ledger (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    owner TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    run_id TEXT
);
CREATE INDEX usage_ledger_owner ON usage_ledger(owner, at);

CREATE TABLE usage_events (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    client TEXT NOT NULL,
    outcome TEXT NOT NULL,
    declared_supersede INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX usage_events_tool ON usage_events(tool, at);

CREATE TABLE surfacings (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL
);
CREATE INDEX surfacings_memory ON surfacings(memory_id, at);
CREATE INDEX surfacings_at ON surfacings(at);

CREATE TABLE locks (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
