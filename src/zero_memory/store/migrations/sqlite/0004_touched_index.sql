-- A routine sweep's subjects are the memories of an owner created or touched
-- since a moment: two index range scans (created, touched) instead of a pass
-- over every memory of the owner, so the sweep's cost follows the new writes.

CREATE INDEX memories_owner_updated ON memories(owner, updated_at);
