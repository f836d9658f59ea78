-- Row-level security for the audit log's appends: what a user's transaction writes names her, or a memory
-- she may read, never another user's account on its own; and for the runs she starts in a teammate's name
-- (a verification of her project), which she may claim, finish and read, with their audit rows.
--
-- 0009 let any named caller append any audit row (0026 kept the meaning): a transaction acting for alice
-- could add a row under bob's owner and in bob's name as actor, which bob then reads as his own history
-- (audit_read shows a reader the rows she owns or acted in), attach a row to one of bob's runs, or link a
-- row to bob's private memory, which then shows it in that memory's trail. Every append a user's
-- transaction makes (the transitions a service calls, a project created, a token or key stored, an OAuth
-- grant, a captured chunk) writes:
--   owner: the caller, the owner of a memory the row names and the caller may read (an action on a
--          team memory is audited under the memory's owner), or the owner of the row's run when the
--          caller started it (a run's start and stop name no memory); never NULL (only system passes
--          write rows of no one: a client registered, a run interrupted, a reindex);
--   actor: the caller; a name with a dot, which no user can have (user names are slugs), for the
--          automatic actions a service runs in its own transaction ("hygiene.verify", "hygiene.refine");
--          or "operator", an operator's command revoking a user's OAuth grants in a transaction acting
--          for that user (cli/oauth.py);
--   run:   none, or a run the caller may read: her own, or one she started (a service's run is claimed in
--          the same transaction: under the caller, or, for a verification of a project, under the owner of
--          each teammate's memory it changes, so that the change is his to undo);
--   links: from a row the caller reads to a memory the row names and she may read (a link makes a row
--          visible to every reader of its memory: one of bob's account rows linked to her own memory
--          would show in her memory's trail).
-- Checked per row, the links cost a bulk import's batch of 256 memories 10.2 ms where 0026's check cost
-- 4.7 (8.0 with the memory's visibility alone; median of 48 batches each); the batch's embeddings take
-- far longer.
-- A system pass (zm.system) appends any row, as before.

-- Some memory that ``named`` (an audit row's memory_ids, a JSON array) lists, the caller may read (the
-- memories policy applies inside), and ``audit_owner`` owns.
CREATE FUNCTION zm_owns_a_named_memory(audit_owner text, named text) RETURNS boolean LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (SELECT 1 FROM memories m
                       WHERE m.id IN (SELECT json_array_elements_text(named::json)) AND m.owner = audit_owner)
    $$;

-- Runs: 0009 showed a user her own only, so a verification by alice of her project, which claims a run of
-- bob's for what it changes of his memories (memory/verification.py), was refused. A run is also readable,
-- and writable, by the user who started it: she can claim a run in another's name only as its starter.
ALTER POLICY runs_caller ON runs
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()) OR started_by = (SELECT zm_caller()));
-- ... and so are the audit rows of such a run: its start and stop, in the name of the automatic actor
-- ("hygiene.verify"), are hers to read as she wrote them (an insert returns what it wrote only if it may
-- read it).
ALTER POLICY audit_read ON audit
    USING ((SELECT zm_system()) OR owner = (SELECT zm_caller()) OR actor = (SELECT zm_caller())
           OR EXISTS (SELECT 1 FROM audit_memories am WHERE am.audit_seq = audit.seq)
           OR EXISTS (SELECT 1 FROM runs r WHERE r.id = audit.run_id AND r.started_by = (SELECT zm_caller())));

ALTER POLICY audit_append ON audit
    WITH CHECK ((SELECT zm_system())
                OR ((owner = (SELECT zm_caller()) OR zm_owns_a_named_memory(owner, memory_ids)
                     OR EXISTS (SELECT 1 FROM runs r WHERE r.id = audit.run_id AND r.owner = audit.owner))
                    AND (actor = (SELECT zm_caller()) OR strpos(actor, '.') > 0 OR actor = 'operator')
                    AND (run_id IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = audit.run_id))));

-- The audit row ``seq`` is one the caller reads and names ``memory_id``: a link is the row's own, to a memory
-- it was written about, never another user's row made readable through her memory. VOLATILE, so that it
-- sees the rows the same statement added before it (a bulk import writes rows and links in one statement:
-- PostgresTx.add_memory_audits); a STABLE function reads as of the statement's start.
CREATE FUNCTION zm_audit_names(seq bigint, memory_id text) RETURNS boolean LANGUAGE sql VOLATILE
    AS $$
        SELECT EXISTS (SELECT 1 FROM audit a
                       WHERE a.seq = zm_audit_names.seq
                         AND zm_audit_names.memory_id IN (SELECT json_array_elements_text(a.memory_ids::json)))
    $$;

ALTER POLICY audit_memories_append ON audit_memories
    WITH CHECK ((SELECT zm_system()) OR (zm_memory_visible(memory_id) AND zm_audit_names(audit_seq, memory_id)));
