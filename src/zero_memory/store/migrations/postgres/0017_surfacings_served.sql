-- Recall's reinforcement counts, for each candidate, the distinct sessions that were served it on
-- the recall channel within 90 days (Tx.sessions_served). With the index on (memory_id, at) alone,
-- every surfacing in the window was a visit to the table for its channel and session: on a team's
-- busy quarter (hundreds of thousands of surfacings, the popular memories thousands each) that was
-- most of a recall. The same index carrying both columns answers the count from the index alone.
DROP INDEX surfacings_memory;
CREATE INDEX surfacings_memory ON surfacings(memory_id, at) INCLUDE (channel, session_id);

-- Reinforcement is evidence about a memory, not about its reader: every member's agent sessions count
-- for everyone who can read it, as on SQLite. The surfacings policy (0009) shows a caller its own rows
-- only, so the count is taken here, across users, for the ids the caller's own policies let it read
-- (the others are dropped first); the caller is handed back as zm_word_documents does.
CREATE FUNCTION zm_sessions_served(ids text[], since text, served_on text)
    RETURNS TABLE (memory_id text, sessions bigint) LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
        readable text[];
    BEGIN
        SELECT coalesce(array_agg(m.id), '{}') INTO readable FROM memories m WHERE m.id = ANY (ids);
        PERFORM set_config('zm.system', 'statistics', true);
        RETURN QUERY
            SELECT s.memory_id::text, count(DISTINCT s.session_id)
            FROM surfacings s
            WHERE s.memory_id = ANY (readable)
              AND s.channel = served_on
              AND s.at >= since
              AND s.session_id IS NOT NULL
            GROUP BY s.memory_id;
        PERFORM set_config('zm.system', previous, true);
    END
    $$;
