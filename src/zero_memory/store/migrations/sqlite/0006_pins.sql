-- Pinned rules: a person marks a memory as a standing rule that leads every briefing.
-- Unpinning removes the row; the audit log keeps who pinned and unpinned what, and when.

CREATE TABLE pins (
    memory_id TEXT PRIMARY KEY,
    pinned_by TEXT NOT NULL,
    pinned_at TEXT NOT NULL
);
