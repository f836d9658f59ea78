-- A retro row proposes: the action the pass would have taken automatically had it been allowed to
-- (hygiene/decide.py), as JSON {"action": "invalidate", "winner", "loser", "reason", "rule"}, so the
-- person or agent settling the row sees it and can accept it. NULL for every other row.

ALTER TABLE disputes ADD COLUMN proposal TEXT;
