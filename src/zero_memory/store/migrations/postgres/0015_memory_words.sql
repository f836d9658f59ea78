-- Full text through a postings table, and a memories policy that reads the caller's scopes once.
--
-- Under row-level security (the servers' role, 0009) the planner may not use an index for a
-- condition whose operator is not leakproof before the policy is checked; the full-text match
-- (@@) is not, so every full-text query (a word's rows, a word's count) read the whole table,
-- testing the policy and the match on each row. memory_words holds each memory's words, one
-- row a word, as its tsvector has them (content_tsv: the text never changes, so the rows are
-- written once; a move changes their scope, a removal takes them away): a word's rows are then
-- a b-tree range (text equality is leakproof), read from the index alone, where the GIN index's
-- bitmap scan visited every matching row of the table. A posting carries its memory's scope so
-- its own policy is the memories' one: no caller sees which memories of another hold a word.
--
-- The policy called zm_readable_scopes() for every row it tested (a function with a subquery is
-- not inlined): the memories policy now reads it once per query, as an InitPlan.

CREATE TABLE memory_words (
    word TEXT COLLATE "C" NOT NULL,
    scope TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (word, scope, seq)
);

INSERT INTO memory_words(word, scope, seq)
SELECT w.word, m.scope, m.seq FROM memories m, unnest(tsvector_to_array(m.content_tsv)) AS w(word);

CREATE FUNCTION zm_memory_words_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_words(word, scope, seq)
    SELECT w.word, a.scope, a.seq FROM added a, unnest(tsvector_to_array(a.content_tsv)) AS w(word);
    RETURN NULL;
END
$$;

CREATE FUNCTION zm_memory_words_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_words SET scope = NEW.scope
    WHERE word = ANY (tsvector_to_array(OLD.content_tsv)) AND scope = OLD.scope AND seq = OLD.seq;
    RETURN NULL;
END
$$;

CREATE FUNCTION zm_memory_words_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_words
    WHERE word = ANY (tsvector_to_array(OLD.content_tsv)) AND scope = OLD.scope AND seq = OLD.seq;
    RETURN NULL;
END
$$;

-- One insert a statement: an import's batch writes its postings at once.
CREATE TRIGGER memory_words_added AFTER INSERT ON memories
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION zm_memory_words_added();
CREATE TRIGGER memory_words_moved AFTER UPDATE OF scope ON memories
    FOR EACH ROW WHEN (OLD.scope IS DISTINCT FROM NEW.scope) EXECUTE FUNCTION zm_memory_words_moved();
CREATE TRIGGER memory_words_removed AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION zm_memory_words_removed();

ALTER TABLE memory_words ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_words FORCE ROW LEVEL SECURITY;
CREATE POLICY memory_words_caller ON memory_words
    USING (zm_system() OR scope = ANY ((SELECT zm_readable_scopes())::text[]));

ALTER POLICY memories_caller ON memories USING (zm_system() OR scope = ANY ((SELECT zm_readable_scopes())::text[]));

-- The GIN index served only the queries memory_words now answers.
DROP INDEX memories_fulltext;

-- The memories holding a word (every lexeme plainto_tsquery('simple', word) makes of it), of the
-- scopes given (NULL: every scope the policy lets the caller see), by seq. A word is one lexeme but
-- for the rare one the parser splits: only then are the postings grouped.
CREATE FUNCTION zm_word_postings(needle text, within text[]) RETURNS TABLE (seq bigint)
    LANGUAGE sql STABLE
    AS $$
        SELECT p.seq FROM memory_words p
        WHERE cardinality(tsvector_to_array(to_tsvector('simple', needle))) = 1
          AND p.word = (tsvector_to_array(to_tsvector('simple', needle)))[1]
          AND (within IS NULL OR p.scope = ANY (within))
        UNION ALL
        SELECT p.seq FROM memory_words p
        WHERE cardinality(tsvector_to_array(to_tsvector('simple', needle))) > 1
          AND p.word = ANY (tsvector_to_array(to_tsvector('simple', needle)))
          AND (within IS NULL OR p.scope = ANY (within))
        GROUP BY p.seq
        HAVING count(*) = cardinality(tsvector_to_array(to_tsvector('simple', needle)))
    $$;

-- How many memories hold each word, counting no further than ``cap`` (as 0009's, from the postings):
-- a word is the lexemes plainto_tsquery makes of it, all of which a memory holds.
CREATE OR REPLACE FUNCTION zm_word_documents(words text[], cap integer) RETURNS TABLE (word text, documents bigint)
    LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
    BEGIN
        PERFORM set_config('zm.system', 'statistics', true);
        RETURN QUERY
            SELECT q.w, (SELECT count(*) FROM (SELECT 1 FROM zm_word_postings(q.w, NULL) LIMIT cap) AS hits)
            FROM unnest(words) AS q(w);
        PERFORM set_config('zm.system', previous, true);
    END
    $$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM memory_words) THEN
        ANALYZE memory_words;
    END IF;
END
$$;
