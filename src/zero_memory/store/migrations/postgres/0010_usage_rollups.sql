-- Retention (hygiene/retention.py): surfacings and usage events past their retention are
-- folded into per-day counts here, then removed. The day is the UTC date, 'YYYY-MM-DD'.

CREATE TABLE surfacing_days (
    day TEXT COLLATE "C" NOT NULL,
    memory_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    channel TEXT COLLATE "C" NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (day, memory_id, user_id, channel)
);
CREATE INDEX surfacing_days_user ON surfacing_days(user_id, day);

CREATE TABLE usage_event_days (
    day TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    tool TEXT COLLATE "C" NOT NULL,
    client TEXT COLLATE "C" NOT NULL,
    outcome TEXT COLLATE "C" NOT NULL,
    declared_supersede INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (day, user_id, tool, client, outcome, declared_supersede)
);
CREATE INDEX usage_event_days_tool ON usage_event_days(tool, day);
CREATE INDEX usage_event_days_user ON usage_event_days(user_id, day);

-- Row-level security, as for the rows they summarize (0009).
ALTER TABLE surfacing_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE surfacing_days FORCE ROW LEVEL SECURITY;
CREATE POLICY surfacing_days_caller ON surfacing_days USING (zm_system() OR user_id = zm_caller());

ALTER TABLE usage_event_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage_event_days FORCE ROW LEVEL SECURITY;
CREATE POLICY usage_event_days_caller ON usage_event_days USING (zm_system() OR user_id = zm_caller());
