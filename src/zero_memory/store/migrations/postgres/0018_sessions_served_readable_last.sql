-- zm_sessions_served (0017) read every candidate's memory row, under the caller's policies, before
-- counting: recall asks about its whole candidate list (about a hundred ids), so that was a hundred
-- look-ups of the memories' primary key and their rows, 0.4 ms of the 0.55 ms the count took on a
-- database where no candidate had been served. Most candidates have no surfacing in the window: the
-- count comes first now, from the surfacings index alone, and only the memories it found are checked
-- against the caller's policies. Same answers: every user's distinct sessions, for the memories the
-- caller may read; the caller's zm.system handed back before the check, so its own policies decide.
CREATE OR REPLACE FUNCTION zm_sessions_served(ids text[], since text, served_on text)
    RETURNS TABLE (memory_id text, sessions bigint) LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
        served text[];
        counts bigint[];
    BEGIN
        PERFORM set_config('zm.system', 'statistics', true);
        SELECT array_agg(c.id), array_agg(c.n) INTO served, counts
        FROM (
            SELECT s.memory_id AS id, count(DISTINCT s.session_id) AS n
            FROM surfacings s
            WHERE s.memory_id = ANY (ids)
              AND s.channel = served_on
              AND s.at >= since
              AND s.session_id IS NOT NULL
            GROUP BY s.memory_id
        ) AS c;
        PERFORM set_config('zm.system', previous, true);
        IF served IS NULL THEN
            RETURN;
        END IF;
        RETURN QUERY
            SELECT f.id::text, f.n
            FROM unnest(served, counts) AS f(id, n)
            WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = f.id);
    END
    $$;
