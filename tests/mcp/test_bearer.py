"""The bearer check of ``/mcp`` (mcp/http.py) on both stores: a valid token lets the request through as its
user, anything else is a 401; on SQLite the token is looked up on the event loop (a local read costs less
than the hop to a worker thread), on PostgreSQL on a worker thread (the loop never waits on a server)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from zero_memory.access.users import add_user, issue_token
from zero_memory.app import App
from zero_memory.mcp.http import BearerAuth
from zero_memory.store import system_tx

pytestmark = pytest.mark.anyio


class Recorded(BearerAuth):
    """The bearer check, noting the thread each look-up ran on."""

    threads: list[int]

    def user_of(self, token: str) -> str | None:
        self.threads.append(threading.get_ident())
        return super().user_of(token)


async def whoami(scope: Scope, receive: Receive, send: Send) -> None:
    user = scope["user"].access_token.client_id
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": user.encode()})


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_token_is_checked_on_the_loop_only_where_the_store_reads_in_this_process(
    make_app: Callable[..., App], backend: str
) -> None:
    app = make_app(backend=backend)
    with system_tx(app.store, "test", write=True) as tx:
        if tx.get_user("alice") is None:
            add_user(tx, "alice")
        token = issue_token(tx, "alice")
    auth = Recorded(whoami, app.store)
    auth.threads = []
    loop_thread = threading.get_ident()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=auth), base_url="http://test") as client:
        allowed = await client.post("/mcp", headers={"Authorization": f"Bearer {token}"})
        refused = await client.post("/mcp", headers={"Authorization": f"Bearer {token}x"})
        missing = await client.post("/mcp")

    assert (allowed.status_code, allowed.text) == (200, "alice")
    assert refused.status_code == missing.status_code == 401
    assert len(auth.threads) == 2  # no header, no look-up
    on_loop = [thread == loop_thread for thread in auth.threads]
    assert on_loop == ([False, False] if app.store.reads_in_server else [True, True])
    assert app.store.reads_in_server == (backend == "postgres")
