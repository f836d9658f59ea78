-- Account deletion removes memory rows, the only operation that does. The vector index of
-- every process follows memory changes through the 'rev' counter (0001): a removed row takes
-- the next value too, recorded here, so each index drops the row's vector at its next refresh
-- and no later snapshot of the index keeps it (store/vector_index.py).

CREATE TABLE memory_removals (
    seq INTEGER PRIMARY KEY,
    rev INTEGER NOT NULL
);
CREATE INDEX memory_removals_rev ON memory_removals(rev);

CREATE TRIGGER memories_rev_delete AFTER DELETE ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'rev';
    INSERT OR REPLACE INTO memory_removals(seq, rev) VALUES (OLD.seq, (SELECT value FROM counters WHERE name = 'rev'));
END;
