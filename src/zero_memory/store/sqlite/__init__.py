"""The SQLite adapter (the embedded default) and the vector index it keeps beside the database file."""
