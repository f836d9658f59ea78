"""The store contract suite (SQLite and PostgreSQL) and backend-only tests."""
