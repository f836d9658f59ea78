-- The vector index's states of the rows (store/sqlite/vectors.py, row_states), read whole when a process
-- first loads the index's snapshot: every row's owner, scope, kind, status, whether it holds a vector,
-- and its rev. Read from the table, embedding_dim and rev lie after the vector in each record, past the
-- page into its overflow pages: the read went through every vector (4.8 GB at a million memories). Read
-- from this index, the table is visited for the record's header alone (whether the vector is NULL).
CREATE INDEX memories_row_states ON memories(seq, owner, scope, kind, status, embedding_dim, rev, embedding IS NOT NULL);
