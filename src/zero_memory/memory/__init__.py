"""The write path: content guard, dedup cascade, declared supersede, recall, lifecycle."""
