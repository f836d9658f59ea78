-- Row-level security for writes: what a user's transaction may add or change, not only what it sees.
--
-- 0009's policies had one expression each, so the rows a caller could see were also the rows it could
-- write, and foreign keys are checked past row-level security. A transaction acting for alice could
-- add a membership of her own to any scope (memberships: user_id = zm_caller()) and so read bob's team,
-- or add a project whose scope was user.bob (projects let a caller add any scope she owns a row of),
-- join it, and read bob's personal memories; it could stage a captured chunk for bob's scope, which the
-- capture pass then writes into; it could add an OAuth code or token under bob's grant (the exchange
-- issues a token for the grant's user). Every write now has its own check, below, and each check reads
-- only rows the caller's own policies show, so a foreign key that names a row she cannot see does not
-- help her. A system pass (zm.system) writes any row, as before.
--
-- The full-text word counts (zm_memory_documents, zm_word_documents, zm_common_words) counted every
-- memory for any caller: a user transaction could learn how many memories of others hold a word. They
-- now answer only a system pass; the store asks them as the pass "statistics" (PostgresTx._word_counts),
-- so ranking still weighs words over the whole store, as SQLite does.

-- The scopes the caller may write: her personal root and core, and those she is a writer or admin of
-- (access/visibility.py, ROLE_CAN_WRITE).
CREATE FUNCTION zm_writable_scopes() RETURNS text[] LANGUAGE sql STABLE
    AS $$
        SELECT ARRAY['user.' || zm_caller(), 'user.' || zm_caller() || '.core']
            || coalesce((SELECT array_agg(scope) FROM memberships
                         WHERE user_id = zm_caller() AND role IN ('writer', 'admin')), '{}'::text[])
    $$;

-- A project row the caller may create or keep: hers, in her own namespace (proj.<caller>.<slug> or
-- team.<caller>.<slug>, one slug without a dot), never a personal scope or another user's.
CREATE FUNCTION zm_own_project(scope text, owner text, kind text, slug text) RETURNS boolean LANGUAGE sql STABLE
    AS $$
        SELECT owner = zm_caller() AND kind IN ('proj', 'team') AND slug <> '' AND strpos(slug, '.') = 0
               AND scope = kind || '.' || zm_caller() || '.' || slug
    $$;

-- A scope whose members the caller decides: a project she owns, or one she is an admin of. Both rows
-- are read under the caller's policies (a function, so the memberships policy may ask memberships).
CREATE FUNCTION zm_manages(target text) RETURNS boolean LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (SELECT 1 FROM projects p WHERE p.scope = target AND p.owner = zm_caller())
            OR EXISTS (SELECT 1 FROM memberships m
                       WHERE m.scope = target AND m.user_id = zm_caller() AND m.role = 'admin')
    $$;

-- An OAuth grant of the caller's (the grants policy shows her own only).
CREATE FUNCTION zm_own_grant(grant_id text) RETURNS boolean LANGUAGE sql STABLE
    AS $$ SELECT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = grant_id AND g.user_id = zm_caller()) $$;

-- Memberships: the caller reads and leaves her own; a membership is added or changed only in a scope
-- she manages (creating a project adds her admin row; `zm project grant` runs as a system pass).
DROP POLICY memberships_caller ON memberships;
CREATE POLICY memberships_read ON memberships FOR SELECT USING (zm_system() OR user_id = zm_caller());
CREATE POLICY memberships_add ON memberships FOR INSERT WITH CHECK (zm_system() OR zm_manages(scope));
CREATE POLICY memberships_change ON memberships FOR UPDATE
    USING (zm_system() OR user_id = zm_caller()) WITH CHECK (zm_system() OR zm_manages(scope));
CREATE POLICY memberships_leave ON memberships FOR DELETE USING (zm_system() OR user_id = zm_caller());

-- Projects: read as before (her own, and those she is a member of); created, changed and removed only
-- by their owner, within her own namespace.
DROP POLICY projects_caller ON projects;
CREATE POLICY projects_read ON projects FOR SELECT
    USING (zm_system() OR owner = zm_caller() OR scope = ANY ((SELECT zm_readable_scopes())::text[]));
CREATE POLICY projects_create ON projects FOR INSERT
    WITH CHECK (zm_system() OR zm_own_project(scope, owner, kind, slug));
CREATE POLICY projects_change ON projects FOR UPDATE
    USING (zm_system() OR owner = zm_caller()) WITH CHECK (zm_system() OR zm_own_project(scope, owner, kind, slug));
CREATE POLICY projects_remove ON projects FOR DELETE USING (zm_system() OR owner = zm_caller());

-- Memories: a new one goes only into a scope the caller may write (a reader of a team adds nothing to
-- it); changes keep a memory within the scopes she reads, as 0009 says.
CREATE POLICY memories_added_where_writable ON memories AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR scope = ANY ((SELECT zm_writable_scopes())::text[]));

-- A captured chunk is staged for a scope its owner may write: the capture pass writes its statements there.
CREATE POLICY capture_chunks_staged_where_writable ON capture_chunks AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR scope = ANY ((SELECT zm_writable_scopes())::text[]));
CREATE POLICY capture_chunks_rearmed_where_writable ON capture_chunks AS RESTRICTIVE FOR UPDATE
    WITH CHECK (zm_system() OR scope = ANY ((SELECT zm_writable_scopes())::text[]));

-- OAuth codes and tokens hang off a grant: only under one of the caller's own.
CREATE POLICY oauth_codes_own_grant ON oauth_codes AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR zm_own_grant(grant_id));
CREATE POLICY oauth_codes_own_grant_kept ON oauth_codes AS RESTRICTIVE FOR UPDATE
    WITH CHECK (zm_system() OR zm_own_grant(grant_id));
CREATE POLICY oauth_tokens_own_grant ON oauth_tokens AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR zm_own_grant(grant_id));
CREATE POLICY oauth_tokens_own_grant_kept ON oauth_tokens AS RESTRICTIVE FOR UPDATE
    WITH CHECK (zm_system() OR zm_own_grant(grant_id));

-- What a user adds about memories names only memories she can see, at both ends (a link's source,
-- as 0009 has it, and its target). Changes (a link removed, a queue row resolved) are 0009's.
CREATE POLICY links_both_ends_visible ON links AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR zm_memory_visible(dst));
CREATE POLICY disputes_memories_visible ON disputes AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR (zm_memory_visible(memory_a) AND (memory_b IS NULL OR zm_memory_visible(memory_b))));
CREATE POLICY portability_candidates_memory_visible ON portability_candidates AS RESTRICTIVE FOR INSERT
    WITH CHECK (zm_system() OR zm_memory_visible(memory_id));

-- The word counts of full-text ranking: a system pass's only.
CREATE OR REPLACE FUNCTION zm_memory_documents() RETURNS bigint LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        found bigint;
    BEGIN
        IF NOT zm_system() THEN
            RAISE EXCEPTION 'word counts are a system pass''s' USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT coalesce(max(seq), 0) INTO found FROM memories;
        RETURN found;
    END
    $$;

CREATE OR REPLACE FUNCTION zm_word_documents(words text[], cap integer) RETURNS TABLE (word text, documents bigint)
    LANGUAGE plpgsql VOLATILE
    AS $$
    BEGIN
        IF NOT zm_system() THEN
            RAISE EXCEPTION 'word counts are a system pass''s' USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN QUERY
            SELECT q.w, (SELECT count(*) FROM (SELECT 1 FROM zm_word_postings(q.w, NULL) LIMIT cap) AS hits)
            FROM unnest(words) AS q(w);
    END
    $$;

CREATE OR REPLACE FUNCTION zm_common_words(sample_rows integer, min_share double precision)
    RETURNS TABLE (word text, share double precision)
    LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        total double precision := (SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass);
        percent double precision;
        sampled bigint;
    BEGIN
        IF NOT zm_system() THEN
            RAISE EXCEPTION 'word counts are a system pass''s' USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF total IS NULL OR total < 1 THEN
            RETURN;
        END IF;
        percent := least(100, 100 * sample_rows / total);
        EXECUTE format('SELECT count(*) FROM memories TABLESAMPLE SYSTEM (%s) REPEATABLE (0)', percent) INTO sampled;
        IF sampled > 0 THEN
            RETURN QUERY
                SELECT s.word, s.ndoc::double precision / sampled
                FROM ts_stat(format('SELECT content_tsv FROM memories TABLESAMPLE SYSTEM (%s) REPEATABLE (0)', percent)) AS s
                WHERE s.ndoc >= min_share * sampled;
        END IF;
    END
    $$;
