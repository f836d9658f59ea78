-- Full text indexes each word's Snowball English stem (store/stems.py), so "how do we deploy" finds
-- "deploys happen on Tuesdays": the index holds zm_stems(content), the stems of the text joined by
-- spaces, computed by the SQL function every connection of the store registers. The index keeps no
-- copy of the text (content=''): a removal hands it the stems of the removed text. Every existing
-- memory is indexed again here.

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts_vocab;
DROP TABLE memories_fts;

CREATE VIRTUAL TABLE memories_fts USING fts5(stems, content='', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row');

INSERT INTO memories_fts(rowid, stems) SELECT seq, zm_stems(content) FROM memories;

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, stems) VALUES (NEW.seq, zm_stems(NEW.content));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, stems) VALUES ('delete', OLD.seq, zm_stems(OLD.content));
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, stems) VALUES ('delete', OLD.seq, zm_stems(OLD.content));
    INSERT INTO memories_fts(rowid, stems) VALUES (NEW.seq, zm_stems(NEW.content));
END;
