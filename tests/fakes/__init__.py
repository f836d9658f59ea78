"""Fake servers for what cannot run here: the LLM providers, over real HTTP on 127.0.0.1."""
