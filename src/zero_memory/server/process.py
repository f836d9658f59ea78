"""One ``zm serve`` process: the options it is built with, its ASGI app, and its body as one of N workers.

``cli/serve.py`` reads the command line and prints what an operator sees; the
processes it starts are built here, alone (``--workers 1``) or under the
supervisor of ``workers.py``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

import typer
from starlette.types import ASGIApp

from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.server import spread as spreading
from zero_memory.server.affinity import Affinity, Siblings
from zero_memory.server.app import create_app
from zero_memory.server.services import HTTP, HTTP_SIBLING
from zero_memory.server.spread import Spread
from zero_memory.settings import Settings
from zero_memory.web.auth import login_link

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """One BLAS thread for the server's numpy, unless the environment chose a number.

    A server runs many small products at once (a sentence's embedding, a vector scan), one per call, on
    threads of its own: BLAS threads add nothing there, and OpenBLAS's spin while they wait for work.
    Measured on two busy cores: a sentence's embedding 11–43 ms of CPU with two BLAS threads, 1.4–1.8 ms
    with one; eight HTTP clients, 7.4–8.0 ms of server CPU a call against 7.0–7.2 ms. Set once for the
    process (a limit per call costs ~100 ms).
    """
    if any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


@dataclass(frozen=True)
class Options:
    """What every server process of one ``zm serve`` is built with."""

    host: str
    allowed_hosts: Sequence[str]
    public_url: str | None
    base_url: str


def server_app(application: App, options: Options, *, first: bool = True) -> ASGIApp:
    """The whole server of one process; the ``first`` (or only) one also runs the scheduler and the capture
    retries."""
    return create_app(
        application,
        host=options.host,
        allowed_hosts=options.allowed_hosts,
        public_url=options.public_url,
        services=HTTP if first else HTTP_SIBLING,
    )


def serve_worker(
    options: Options, siblings: Siblings, listener: socket.socket, private: socket.socket, spread: Spread
) -> None:
    """One worker of ``zm serve --workers N``: a whole server on the shared socket and its own private one.

    Worker 0 also runs the scheduler and the capture retries, and holds the login link it prints. A worker
    holding more connections than a sibling hands it the new ones (spread.py).
    """
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    one_blas_thread()
    application = build_app(Settings.from_environ())
    first = siblings.index == 0
    asgi = Affinity(server_app(application, options, first=first), siblings)
    if first:
        typer.echo(login_link(application, options.public_url or options.base_url))
    config = uvicorn.Config(
        asgi,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        http=spreading.balanced_protocol(spread, AutoHTTPProtocol),
        ws="none",  # an upgrade would replace the protocol that counts the worker's connections
    )
    try:
        # Ctrl-C reaches every worker: uvicorn shuts down, then raises the signal again.
        with suppress(KeyboardInterrupt):
            spreading.serve(config, spread, [listener, private])
    finally:
        application.close()
