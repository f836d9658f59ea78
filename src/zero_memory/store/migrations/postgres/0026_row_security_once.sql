-- Row-level security that reads the transaction's caller once a statement, not once a row.
--
-- The policies of 0009, 0010, 0015, 0021 and 0024 test zm_system() and zm_caller() as they are: plain SQL
-- functions, inlined into each policy, so current_setting() was called for every row a statement read
-- (recall's postings, ~16,000 rows of memory_words at 100,000 memories: 3.79 ms under the policies, 3.06 ms
-- with the test read once, 2.15 ms with no policy). Written as a sub-select, each is an InitPlan: evaluated
-- once when the statement starts, its value then read by every row, as 0015 already does for the readable
-- scopes. Every policy keeps its name, its command, and the meaning of its USING and WITH CHECK; only the
-- per-statement values move into sub-selects. What stays per row is what depends on the row: the scope or
-- owner compared, and zm_memory_visible() of the row's memory (a query of its own, under the memories
-- policy, which reads the caller once per call).

-- Accounts.
ALTER POLICY users_caller ON users USING ((SELECT zm_system()) OR id = (SELECT zm_caller()));
ALTER POLICY tokens_caller ON tokens USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY provider_keys_caller ON provider_keys USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY sessions_caller ON sessions USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));

ALTER POLICY memberships_read ON memberships USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY memberships_add ON memberships WITH CHECK ((SELECT zm_system()) OR zm_manages(scope));
ALTER POLICY memberships_change ON memberships
    USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller())) WITH CHECK ((SELECT zm_system()) OR zm_manages(scope));
ALTER POLICY memberships_leave ON memberships USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));

-- Projects.
ALTER POLICY projects_read ON projects
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()) OR scope = ANY ((SELECT zm_readable_scopes())::text[]));
ALTER POLICY projects_create ON projects WITH CHECK ((SELECT zm_system()) OR zm_own_project(scope, owner, kind, slug));
ALTER POLICY projects_change ON projects
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()))
    WITH CHECK ((SELECT zm_system()) OR zm_own_project(scope, owner, kind, slug));
ALTER POLICY projects_remove ON projects USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));

-- Memories and their postings.
ALTER POLICY memories_caller ON memories
    USING ((SELECT zm_system()) OR scope = ANY ((SELECT zm_readable_scopes())::text[]));
ALTER POLICY memories_added_where_writable ON memories
    WITH CHECK ((SELECT zm_system()) OR scope = ANY ((SELECT zm_writable_scopes())::text[]));
ALTER POLICY memory_words_caller ON memory_words
    USING ((SELECT zm_system()) OR scope = ANY ((SELECT zm_readable_scopes())::text[]));

-- What hangs off memories.
ALTER POLICY links_caller ON links USING ((SELECT zm_system()) OR zm_memory_visible(src));
ALTER POLICY links_both_ends_visible ON links WITH CHECK ((SELECT zm_system()) OR zm_memory_visible(dst));
ALTER POLICY pins_caller ON pins USING ((SELECT zm_system()) OR zm_memory_visible(memory_id));
ALTER POLICY rescan_guards_caller ON rescan_guards USING ((SELECT zm_system()) OR zm_memory_visible(memory_id));
ALTER POLICY judgements_caller ON judgements
    USING ((SELECT zm_system()) OR (zm_memory_visible(split_part(pair_key, '|', 1))
                                    AND zm_memory_visible(split_part(pair_key, '|', 2))));
ALTER POLICY memory_anchors_caller ON memory_anchors
    USING ((SELECT zm_system()) OR zm_memory_visible(memory_id))
    WITH CHECK ((SELECT zm_system()) OR zm_memory_visible(memory_id));

-- The audit log.
ALTER POLICY audit_read ON audit
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()) OR actor = (SELECT zm_caller())
           OR EXISTS (SELECT 1 FROM audit_memories am WHERE am.audit_seq = audit.seq));
ALTER POLICY audit_append ON audit WITH CHECK ((SELECT zm_system()) OR (SELECT zm_caller()) IS NOT NULL);
ALTER POLICY audit_system_update ON audit USING ((SELECT zm_system()));
ALTER POLICY audit_system_delete ON audit USING ((SELECT zm_system()));

ALTER POLICY audit_memories_read ON audit_memories USING ((SELECT zm_system()) OR zm_memory_visible(memory_id));
ALTER POLICY audit_memories_append ON audit_memories
    WITH CHECK ((SELECT zm_system()) OR (SELECT zm_caller()) IS NOT NULL);
ALTER POLICY audit_memories_system_update ON audit_memories USING ((SELECT zm_system()));
ALTER POLICY audit_memories_system_delete ON audit_memories USING ((SELECT zm_system()));

-- The review queue.
ALTER POLICY disputes_caller ON disputes
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller())
           OR (zm_memory_visible(memory_a) AND (memory_b IS NULL OR zm_memory_visible(memory_b))));
ALTER POLICY disputes_memories_visible ON disputes
    WITH CHECK ((SELECT zm_system())
                OR (zm_memory_visible(memory_a) AND (memory_b IS NULL OR zm_memory_visible(memory_b))));

-- Per-user rows.
ALTER POLICY runs_caller ON runs USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));
ALTER POLICY usage_ledger_caller ON usage_ledger USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));
ALTER POLICY usage_events_caller ON usage_events USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY surfacings_caller ON surfacings USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY surfacing_days_caller ON surfacing_days USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY usage_event_days_caller ON usage_event_days
    USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY portability_candidates_caller ON portability_candidates
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));
ALTER POLICY portability_candidates_memory_visible ON portability_candidates
    WITH CHECK ((SELECT zm_system()) OR zm_memory_visible(memory_id));

-- The capture stream.
ALTER POLICY capture_chunks_caller ON capture_chunks USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()));
ALTER POLICY capture_chunks_staged_where_writable ON capture_chunks
    WITH CHECK ((SELECT zm_system()) OR scope = ANY ((SELECT zm_writable_scopes())::text[]));
ALTER POLICY capture_chunks_rearmed_where_writable ON capture_chunks
    WITH CHECK ((SELECT zm_system()) OR scope = ANY ((SELECT zm_writable_scopes())::text[]));
ALTER POLICY capture_budgets_caller ON capture_budgets
    USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));

-- OAuth.
ALTER POLICY oauth_grants_caller ON oauth_grants USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY oauth_codes_caller ON oauth_codes USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY oauth_codes_own_grant ON oauth_codes WITH CHECK ((SELECT zm_system()) OR zm_own_grant(grant_id));
ALTER POLICY oauth_codes_own_grant_kept ON oauth_codes WITH CHECK ((SELECT zm_system()) OR zm_own_grant(grant_id));
ALTER POLICY oauth_tokens_caller ON oauth_tokens USING ((SELECT zm_system()) OR user_id = (SELECT zm_caller()));
ALTER POLICY oauth_tokens_own_grant ON oauth_tokens WITH CHECK ((SELECT zm_system()) OR zm_own_grant(grant_id));
ALTER POLICY oauth_tokens_own_grant_kept ON oauth_tokens WITH CHECK ((SELECT zm_system()) OR zm_own_grant(grant_id));
ALTER POLICY oauth_clients_read ON oauth_clients USING ((SELECT zm_system()) OR (SELECT zm_caller()) IS NOT NULL);
ALTER POLICY oauth_clients_system_insert ON oauth_clients WITH CHECK ((SELECT zm_system()));
ALTER POLICY oauth_clients_system_update ON oauth_clients USING ((SELECT zm_system()));
ALTER POLICY oauth_clients_system_delete ON oauth_clients USING ((SELECT zm_system()));
