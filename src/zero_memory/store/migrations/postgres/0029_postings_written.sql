-- What a server process needs to keep the words' postings between recalls (store/postgres/postings.py).
--
-- Recall read each matched word's postings from memory_words at every recall (~16,000 rows at 100,000
-- memories, a third of a recall's time in the server). They change only when a memory arrives, moves to
-- another scope or is removed, so a process keeps what it read as of a snapshot of the database and, at
-- each recall, reads only what transactions that snapshot does not show wrote since:
--   postings_xid: the transaction that last wrote a memory's postings (its insert, or its move to another
--                 scope), indexed, so the memories written since a snapshot are a short range of it;
--   postings_removed: the last transaction that removed memories (one row); a process whose snapshot
--                 does not show it starts again rather than keep a removed memory's postings.
-- Transaction ids, not the memories' seq: two users' writes do not wait for each other, and a seq taken
-- first may commit last; a snapshot says which transactions it shows, whatever order they end in.

-- The memories there are keep no id (NULL: written before anything a process keeps, never caught up): a
-- default for them would rewrite the table and rebuild every index, the HNSW graph included (minutes at a
-- million memories, the table locked throughout); the default applies to the rows written from now on.
ALTER TABLE memories ADD COLUMN postings_xid xid8;
ALTER TABLE memories ALTER COLUMN postings_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX memories_postings_xid ON memories (postings_xid);

CREATE FUNCTION zm_postings_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.postings_xid := pg_current_xact_id();
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_postings_moved BEFORE UPDATE OF scope ON memories
    FOR EACH ROW WHEN (OLD.scope IS DISTINCT FROM NEW.scope) EXECUTE FUNCTION zm_postings_moved();

CREATE TABLE postings_removed (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    xid xid8 NOT NULL
);
INSERT INTO postings_removed(xid) VALUES (pg_current_xact_id());

CREATE FUNCTION zm_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE postings_removed SET xid = pg_current_xact_id();
    RETURN NULL;
END
$$;

-- Once a statement: an account's erasure removes its memories in one.
CREATE TRIGGER memories_postings_removed AFTER DELETE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION zm_postings_removed();

-- One transaction id, no one's data: every transaction reads it, and one that removes memories stamps it.
ALTER TABLE postings_removed ENABLE ROW LEVEL SECURITY;
ALTER TABLE postings_removed FORCE ROW LEVEL SECURITY;
CREATE POLICY postings_removed_read ON postings_removed FOR SELECT USING (true);
CREATE POLICY postings_removed_stamped ON postings_removed FOR UPDATE USING (true) WITH CHECK (true);

-- A word's postings of every scope, each with its memory's scope (as zm_word_postings, 0015, reads them
-- for the scopes given). Under row-level security like any read: the keeping process asks as a system pass.
CREATE FUNCTION zm_word_scoped_postings(needle text) RETURNS TABLE (scope text, seq bigint)
    LANGUAGE sql STABLE
    AS $$
        SELECT p.scope, p.seq FROM memory_words p
        WHERE cardinality(tsvector_to_array(to_tsvector('simple', needle))) = 1
          AND p.word = (tsvector_to_array(to_tsvector('simple', needle)))[1]
        UNION ALL
        SELECT p.scope, p.seq FROM memory_words p
        WHERE cardinality(tsvector_to_array(to_tsvector('simple', needle))) > 1
          AND p.word = ANY (tsvector_to_array(to_tsvector('simple', needle)))
        GROUP BY p.scope, p.seq
        HAVING count(*) = cardinality(tsvector_to_array(to_tsvector('simple', needle)))
    $$;
