-- The count of 0017 was to be read from surfacings_memory alone, but under the servers' role the
-- surfacings policy (zm_system() OR user_id = zm_caller()) is tested on every row the count reads,
-- even while zm.system is set, and user_id was not in the index: every surfacing in the window was a
-- visit to the table for it. The index carries user_id too, so the count is an index-only scan again.
DROP INDEX surfacings_memory;
CREATE INDEX surfacings_memory ON surfacings(memory_id, at) INCLUDE (channel, session_id, user_id);
