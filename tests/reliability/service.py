"""One ``zm serve`` over data that outlives it: start it, SIGKILL it, start it again.

Built on the MCP tests' helpers (``tests.mcp.helpers``): the same data
directory, users made with ``zm user add``, a free loopback port per start.
The database is the data directory's SQLite file, or a PostgreSQL database
named by URL; the test process opens the same database to check it.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.mcp.helpers import Deployment, base_env, start_server, stop_server, zm
from zero_memory.store import Store, open_store


@dataclass
class Service:
    deployment: Deployment
    database_url: str
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    logs: list[Path] = field(default_factory=list)
    args: tuple[str, ...] = ()  # options of zm serve, e.g. ("--workers", "2")

    @property
    def url(self) -> str:
        return self.deployment.url

    def start(self) -> None:
        """Start ``zm serve`` and wait for /healthz (its lifespan has swept orphan runs by then)."""
        assert self.process is None, "already running"
        self.starts += 1
        log = self.deployment.home / f"serve-{self.starts}.log"
        self.logs.append(log)
        self.process, self.deployment.url = start_server(self.deployment.env, log, *self.args)
        self.deployment.log = log

    def kill(self) -> None:
        """SIGKILL: no shutdown hook, no rollback, no lock release by the server itself.

        The process is reaped at once, so its pid is gone when the next start
        asks whether a lock's holder still lives (a zombie would still answer).
        """
        assert self.process is not None, "not running"
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            stop_server(self.process)
            self.process = None

    def log_text(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')}" for log in self.logs if log.exists())

    @contextmanager
    def store(self) -> Iterator[Store]:
        """The server's database, opened by this process."""
        opened = open_store(self.database_url)
        try:
            yield opened
        finally:
            opened.close()


def deploy(
    home: Path,
    database_url: str | None = None,
    *,
    users: Sequence[str] = ("alice",),
    env: Mapping[str, str] | None = None,
) -> Service:
    """A data directory with ``users`` and their tokens; nothing started yet."""
    environ = {**base_env(home), **(env or {})}
    if database_url:
        environ["ZM_DATABASE_URL"] = database_url
    tokens = {name: json.loads(zm(environ, "user", "add", name, "--json").stdout)["token"] for name in users}
    deployment = Deployment(home=home, env=environ, tokens=tokens)
    return Service(deployment, database_url or f"sqlite:///{deployment.database}")


@contextmanager
def running(service: Service) -> Iterator[Service]:
    """Started, and stopped (or left killed) at the end, whatever happened."""
    service.start()
    try:
        yield service
    finally:
        service.stop()
