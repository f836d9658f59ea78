-- A surfacing names the session that was served and the channel that served it:
-- reinforcement counts agent sessions of recall, once each; re-examination counts
-- all traffic. Rows written before this have neither (session NULL, channel recall).

ALTER TABLE surfacings ADD COLUMN session_id TEXT;
ALTER TABLE surfacings ADD COLUMN channel TEXT NOT NULL DEFAULT 'recall';
