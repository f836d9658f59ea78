"""The ``zm`` command: one module per command group."""
