-- Recall's reinforcement counts, for each candidate, the distinct sessions that were served it on
-- the recall channel within 90 days (Tx.sessions_served). With the index on (memory_id, at) alone,
-- every surfacing in the window was a look-up in the table for its channel and session: on a team's
-- busy quarter (hundreds of thousands of surfacings, the popular memories thousands each) that was
-- most of a recall. The same index carrying both columns answers the count from the index alone,
-- and still serves every query the old one did (their columns lead it).

DROP INDEX surfacings_memory;
CREATE INDEX surfacings_memory ON surfacings(memory_id, at, channel, session_id);
