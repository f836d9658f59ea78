"""zero-memory: a self-hosted memory server for AI coding agents that keeps its corpus clean."""

__version__ = "0.1.0"
