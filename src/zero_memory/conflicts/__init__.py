"""The review queue: listing disputes, settling them one by one or in bulk, challenging a memory."""
