-- Retention (hygiene/retention.py): surfacings and usage events past their retention are
-- folded into per-day counts here, then removed. The day is the UTC date, 'YYYY-MM-DD'.

CREATE TABLE surfacing_days (
    day TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (day, memory_id, user_id, channel)
);
CREATE INDEX surfacing_days_user ON surfacing_days(user_id, day);

CREATE TABLE usage_event_days (
    day TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    client TEXT NOT NULL,
    outcome TEXT NOT NULL,
    declared_supersede INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (day, user_id, tool, client, outcome, declared_supersede)
);
CREATE INDEX usage_event_days_tool ON usage_event_days(tool, day);
CREATE INDEX usage_event_days_user ON usage_event_days(user_id, day);
