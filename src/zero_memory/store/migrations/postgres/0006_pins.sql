-- Pinned rules: a person marks a memory as a standing rule that leads every briefing.
-- Unpinning removes the row; the audit log keeps who pinned and unpinned what, and when.

CREATE TABLE pins (
    memory_id TEXT COLLATE "C" PRIMARY KEY,
    pinned_by TEXT COLLATE "C" NOT NULL,
    pinned_at TEXT COLLATE "C" NOT NULL
);
