-- Full text counts a word's rows from memories_fts_vocab. 0001 made that table only after it was
-- edited in place on its first day: a store created before the edit (0001 alone, before 0.1.0)
-- records 0001 but has no such table, and every recall from it failed (no such table:
-- memories_fts_vocab), found by tests/upgrade's fixture of that level. Every other store has it.

CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row');
