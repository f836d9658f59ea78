"""The PostgreSQL adapter: pgvector for search, row-level security for who may read what."""
