"""Pure types and rules: memories, kinds, scopes, ranks, verdicts. No I/O here."""
