"""Tests for the write path, recall and lifecycle."""
