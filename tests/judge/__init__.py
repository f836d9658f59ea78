"""Tests for the judge: verdicts, prompt, providers over real HTTP, ledger, evaluation."""
