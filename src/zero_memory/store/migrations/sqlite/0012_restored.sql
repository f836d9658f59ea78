-- A restored memory stays: when a person, an agent or an undo last brought a memory back from an
-- invalidation (transitions.restore). Automation may queue such a memory but never invalidate it
-- again; routing reads this column instead of each pair's audit trail. Memories restored before
-- this migration get the time of their latest restore audit row.

ALTER TABLE memories ADD COLUMN restored_at TEXT;

UPDATE memories SET restored_at = (
    SELECT max(a.at) FROM audit_memories am JOIN audit a ON a.seq = am.audit_seq
    WHERE am.memory_id = memories.id AND a.action = 'restore'
)
WHERE id IN (
    SELECT am.memory_id FROM audit_memories am JOIN audit a ON a.seq = am.audit_seq WHERE a.action = 'restore'
);
