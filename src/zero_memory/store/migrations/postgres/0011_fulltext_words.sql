-- Full text sees the words SQLite's tokenizer sees (store/terms.py): ASCII punctuation is
-- blanked before the parser runs, so it keeps no path, host, e-mail or version number whole
-- ("docs/runbooks/x-12.md" holds the words docs, runbooks, x, 12, md; "OPS-4963" ops and 4963).
-- ANALYZE gives the full-text plan the common words of the new column at once (autovacuum would
-- wait for a tenth of the table to change); an empty table is left unanalysed, as a new one is.

DROP INDEX memories_fulltext;
ALTER TABLE memories DROP COLUMN content_tsv;
ALTER TABLE memories ADD COLUMN content_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, translate(content, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                '))
) STORED;
CREATE INDEX memories_fulltext ON memories USING gin (content_tsv);
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM memories) THEN
        ANALYZE memories;
    END IF;
END
$$;
