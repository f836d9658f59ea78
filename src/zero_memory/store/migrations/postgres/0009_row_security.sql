-- Row-level security: the database itself keeps each user's rows from every other user.
--
-- Each transaction names its caller with transaction-local settings (PostgresTx.act_as and
-- act_as_system): zm.caller is the user id a service acts for (set where the service computes
-- the caller's visibility), zm.system the name of a system pass (hygiene, the scheduler,
-- operator commands) that acts across owners. A transaction that named neither sees no row
-- of any table below, and a query that forgot its owner or scope filter sees only the
-- caller's rows. The application's own filters stay as they are; these policies are the
-- net under them.
--
-- FORCE applies the policies to the tables' owner too, which is the role zero-memory
-- connects as (docs/deployment.md, Row-level security); only a superuser or a role with
-- BYPASSRLS is exempt, and the server must not connect as one.
--
-- The functions are plain SQL (inlined into the policies); the readable scopes mirror
-- access/visibility.py: the caller's personal root and core, and every scope it is a member of.

CREATE FUNCTION zm_caller() RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT nullif(current_setting('zm.caller', true), '') $$;

CREATE FUNCTION zm_system() RETURNS boolean LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('zm.system', true), '') <> '' $$;

CREATE FUNCTION zm_readable_scopes() RETURNS text[] LANGUAGE sql STABLE
    AS $$
        SELECT ARRAY['user.' || zm_caller(), 'user.' || zm_caller() || '.core']
            || coalesce((SELECT array_agg(scope) FROM memberships WHERE user_id = zm_caller()), '{}'::text[])
    $$;

-- A memory row the caller may read (the memories policy applies inside the subquery).
CREATE FUNCTION zm_memory_visible(memory_id text) RETURNS boolean LANGUAGE sql STABLE
    AS $$ SELECT EXISTS (SELECT 1 FROM memories WHERE id = memory_id) $$;

-- Accounts: each user's own row, tokens, keys, sessions and memberships.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;
CREATE POLICY users_caller ON users USING (zm_system() OR id = zm_caller());

ALTER TABLE tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY tokens_caller ON tokens USING (zm_system() OR user_id = zm_caller());

ALTER TABLE provider_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE provider_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY provider_keys_caller ON provider_keys USING (zm_system() OR user_id = zm_caller());

ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY sessions_caller ON sessions USING (zm_system() OR owner = zm_caller());

ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
ALTER TABLE memberships FORCE ROW LEVEL SECURITY;
CREATE POLICY memberships_caller ON memberships USING (zm_system() OR user_id = zm_caller());

-- Projects: the ones the caller owns or is a member of.
ALTER TABLE projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE projects FORCE ROW LEVEL SECURITY;
CREATE POLICY projects_caller ON projects
    USING (zm_system() OR owner = zm_caller() OR scope = ANY (zm_readable_scopes()));

-- Memories: the caller's readable scopes.
ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
CREATE POLICY memories_caller ON memories USING (zm_system() OR scope = ANY (zm_readable_scopes()));

-- What hangs off memories: visible with the memory it names.
ALTER TABLE links ENABLE ROW LEVEL SECURITY;
ALTER TABLE links FORCE ROW LEVEL SECURITY;
CREATE POLICY links_caller ON links USING (zm_system() OR zm_memory_visible(src));

ALTER TABLE pins ENABLE ROW LEVEL SECURITY;
ALTER TABLE pins FORCE ROW LEVEL SECURITY;
CREATE POLICY pins_caller ON pins USING (zm_system() OR zm_memory_visible(memory_id));

ALTER TABLE rescan_guards ENABLE ROW LEVEL SECURITY;
ALTER TABLE rescan_guards FORCE ROW LEVEL SECURITY;
CREATE POLICY rescan_guards_caller ON rescan_guards USING (zm_system() OR zm_memory_visible(memory_id));

-- The judgement cache is keyed by a pair of memory ids ('a|b', sorted): both must be visible.
ALTER TABLE judgements ENABLE ROW LEVEL SECURITY;
ALTER TABLE judgements FORCE ROW LEVEL SECURITY;
CREATE POLICY judgements_caller ON judgements
    USING (zm_system() OR (zm_memory_visible(split_part(pair_key, '|', 1))
                           AND zm_memory_visible(split_part(pair_key, '|', 2))));

-- The audit log: rows about the caller's account or about a memory the caller may read.
-- Any named caller appends (an action on a team memory is audited under the memory's
-- owner); only a system pass changes or removes rows (account deletion).
ALTER TABLE audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_read ON audit FOR SELECT
    USING (zm_system() OR owner = zm_caller() OR actor = zm_caller()
           OR EXISTS (SELECT 1 FROM audit_memories am WHERE am.audit_seq = audit.seq));
CREATE POLICY audit_append ON audit FOR INSERT WITH CHECK (zm_system() OR zm_caller() IS NOT NULL);
CREATE POLICY audit_system_update ON audit FOR UPDATE USING (zm_system());
CREATE POLICY audit_system_delete ON audit FOR DELETE USING (zm_system());

ALTER TABLE audit_memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_memories FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_memories_read ON audit_memories FOR SELECT
    USING (zm_system() OR zm_memory_visible(memory_id));
CREATE POLICY audit_memories_append ON audit_memories FOR INSERT WITH CHECK (zm_system() OR zm_caller() IS NOT NULL);
CREATE POLICY audit_memories_system_update ON audit_memories FOR UPDATE USING (zm_system());
CREATE POLICY audit_memories_system_delete ON audit_memories FOR DELETE USING (zm_system());

-- The review queue: the owner's rows, and rows whose memories the caller may all read.
ALTER TABLE disputes ENABLE ROW LEVEL SECURITY;
ALTER TABLE disputes FORCE ROW LEVEL SECURITY;
CREATE POLICY disputes_caller ON disputes
    USING (zm_system() OR owner = zm_caller()
           OR (zm_memory_visible(memory_a) AND (memory_b IS NULL OR zm_memory_visible(memory_b))));

-- Per-user rows.
ALTER TABLE runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE runs FORCE ROW LEVEL SECURITY;
CREATE POLICY runs_caller ON runs USING (zm_system() OR owner = zm_caller());

ALTER TABLE usage_ledger ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage_ledger FORCE ROW LEVEL SECURITY;
CREATE POLICY usage_ledger_caller ON usage_ledger USING (zm_system() OR owner = zm_caller());

ALTER TABLE usage_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage_events FORCE ROW LEVEL SECURITY;
CREATE POLICY usage_events_caller ON usage_events USING (zm_system() OR user_id = zm_caller());

ALTER TABLE surfacings ENABLE ROW LEVEL SECURITY;
ALTER TABLE surfacings FORCE ROW LEVEL SECURITY;
CREATE POLICY surfacings_caller ON surfacings USING (zm_system() OR user_id = zm_caller());

ALTER TABLE portability_candidates ENABLE ROW LEVEL SECURITY;
ALTER TABLE portability_candidates FORCE ROW LEVEL SECURITY;
CREATE POLICY portability_candidates_caller ON portability_candidates
    USING (zm_system() OR owner = zm_caller());

-- The capture stream (0007): staged transcript chunks and each owner's allowance.
ALTER TABLE capture_chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_chunks FORCE ROW LEVEL SECURITY;
CREATE POLICY capture_chunks_caller ON capture_chunks USING (zm_system() OR owner = zm_caller());

ALTER TABLE capture_budgets ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_budgets FORCE ROW LEVEL SECURITY;
CREATE POLICY capture_budgets_caller ON capture_budgets USING (zm_system() OR user_id = zm_caller());

-- OAuth (0008). A grant and the codes and tokens issued under it are their user's.
-- Presented codes and tokens are looked up before anyone is known to be calling: those
-- look-ups run as the system pass "oauth" (access/oauth.py), as bearer tokens do as "auth".
ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_grants FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_grants_caller ON oauth_grants USING (zm_system() OR user_id = zm_caller());

ALTER TABLE oauth_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_codes_caller ON oauth_codes USING (zm_system() OR user_id = zm_caller());

ALTER TABLE oauth_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_tokens_caller ON oauth_tokens USING (zm_system() OR user_id = zm_caller());

-- Registered clients belong to no user (a client registers itself, anonymously, before
-- anyone signs in) and any signed-in user may be asked to approve any of them: every
-- named caller reads them; only the system pass registers, changes or removes one.
ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_clients FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_clients_read ON oauth_clients FOR SELECT USING (zm_system() OR zm_caller() IS NOT NULL);
CREATE POLICY oauth_clients_system_insert ON oauth_clients FOR INSERT WITH CHECK (zm_system());
CREATE POLICY oauth_clients_system_update ON oauth_clients FOR UPDATE USING (zm_system());
CREATE POLICY oauth_clients_system_delete ON oauth_clients FOR DELETE USING (zm_system());

-- Full-text ranking weighs a query's words by how many memories hold them, over every
-- memory, as SQLite's full-text vocabulary counts them: a weight depends on how many rows
-- hold a word, never on which. pg_stats hides the statistics of a table under row-level
-- security, and a caller's own count would see only its rows, so these functions count as
-- the system pass "statistics", then put back the transaction's setting before they return.
-- They return numbers, never a row.
CREATE FUNCTION zm_memory_documents() RETURNS bigint LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
        found bigint;
    BEGIN
        PERFORM set_config('zm.system', 'statistics', true);
        SELECT coalesce(max(seq), 0) INTO found FROM memories;
        PERFORM set_config('zm.system', previous, true);
        RETURN found;
    END
    $$;

-- How many memories hold each word, counting no further than ``cap``.
CREATE FUNCTION zm_word_documents(words text[], cap integer) RETURNS TABLE (word text, documents bigint)
    LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
    BEGIN
        PERFORM set_config('zm.system', 'statistics', true);
        RETURN QUERY
            SELECT w, (SELECT count(*) FROM (SELECT 1 FROM memories
                                             WHERE content_tsv @@ plainto_tsquery('simple', w) LIMIT cap) AS hits)
            FROM unnest(words) AS w;
        PERFORM set_config('zm.system', previous, true);
    END
    $$;

-- The words held by at least ``min_share`` of the memories, from a sample of about
-- ``sample_rows`` rows (as ANALYZE samples them); nothing before the table was first analysed.
CREATE FUNCTION zm_common_words(sample_rows integer, min_share double precision)
    RETURNS TABLE (word text, share double precision)
    LANGUAGE plpgsql VOLATILE
    AS $$
    DECLARE
        previous text := coalesce(current_setting('zm.system', true), '');
        total double precision := (SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass);
        percent double precision;
        sampled bigint;
    BEGIN
        IF total IS NULL OR total < 1 THEN
            RETURN;
        END IF;
        percent := least(100, 100 * sample_rows / total);
        PERFORM set_config('zm.system', 'statistics', true);
        EXECUTE format('SELECT count(*) FROM memories TABLESAMPLE SYSTEM (%s) REPEATABLE (0)', percent) INTO sampled;
        IF sampled > 0 THEN
            RETURN QUERY
                SELECT s.word, s.ndoc::double precision / sampled
                FROM ts_stat(format('SELECT content_tsv FROM memories TABLESAMPLE SYSTEM (%s) REPEATABLE (0)', percent)) AS s
                WHERE s.ndoc >= min_share * sampled;
        END IF;
        PERFORM set_config('zm.system', previous, true);
    END
    $$;
