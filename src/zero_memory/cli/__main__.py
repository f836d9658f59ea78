"""``python -m zero_memory.cli`` is ``zm``."""

from zero_memory.cli.main import main

main()
