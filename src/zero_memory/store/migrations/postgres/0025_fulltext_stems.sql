-- Full text indexes each word's Snowball English stem (store/stems.py), so "how do we deploy" finds
-- "deploys happen on Tuesdays". The zm_stems configuration stems the parser's words of letters with
-- PostgreSQL's built-in Snowball English stemmer (no stop words: queries choose their words) and keeps
-- every other token as 'simple' does (numbers, codes: lowercased, as written). SQLite's index holds the
-- same stems, from the same Snowball stemmer (PyStemmer). content_tsv is rebuilt from the text with the
-- new configuration, and memory_words (0015), each memory's words one row a word, from it.

CREATE TEXT SEARCH DICTIONARY zm_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION zm_stems (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION zm_stems
    ALTER MAPPING FOR asciiword, word, asciihword, hword, hword_asciipart, hword_part WITH zm_english_stem;

ALTER TABLE memories DROP COLUMN content_tsv;
ALTER TABLE memories ADD COLUMN content_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('zm_stems'::regconfig, translate(content, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                '))
) STORED;

DELETE FROM memory_words;
INSERT INTO memory_words(word, scope, seq)
SELECT w.word, m.scope, m.seq FROM memories m, unnest(tsvector_to_array(m.content_tsv)) AS w(word);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM memories) THEN
        ANALYZE memories;
        ANALYZE memory_words;
    END IF;
END
$$;
