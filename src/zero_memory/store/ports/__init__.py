"""The store port by family: one protocol per family of queries, each in its own module.

``store.base.Tx`` is their union. A family's shared SQL is in the ``store/queries/`` module of
the same name (``sql.SqlTx`` mixes them); search is ``queries/text.py`` for full text and each
adapter's own vector search, and ``acting`` is each adapter's (``sqlite/adapter.py``,
``postgres/tx.py``).
"""
