"""``zm serve`` and ``zm mcp`` as an operator runs them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp.helpers import Deployment, call_ok, connect, start_server, stop_server, unique, zm
from zero_memory.server.process import BLAS_THREAD_VARIABLES

pytestmark = pytest.mark.slow


def test_every_command_has_help(deployment: Deployment) -> None:
    serve = zm(deployment.env, "serve", "--help").stdout
    assert "--host" in serve and "--port" in serve and "ZM_ALLOWED_HOSTS" in serve and "--workers" in serve
    assert "stdio" in zm(deployment.env, "mcp", "--help").stdout


def test_zm_mcp_refuses_an_unknown_user_in_one_line(deployment: Deployment) -> None:
    done = zm({**deployment.env, "ZM_USER": "carol"}, "mcp", check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "not_found: no user carol (create it with 'zm user add carol')"


def test_a_non_loopback_bind_warns_and_allowed_hosts_admit_a_proxy_name(deployment: Deployment) -> None:
    log = deployment.home / "serve-public.log"
    process, url = start_server({**deployment.env, "ZM_ALLOWED_HOSTS": "zm.example.com"}, log, "--host", "0.0.0.0")
    try:
        output = log.read_text()
        assert "listening on http://0.0.0.0:" in output
        assert "warning: bound to 0.0.0.0" in output and "TLS" in output

        def status(host: str) -> int:
            return httpx.post(
                f"{url}/mcp",
                headers={
                    "Host": host,
                    "Authorization": f"Bearer {deployment.tokens['alice']}",
                    "Accept": "application/json, text/event-stream",
                },
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "proxy-test", "version": "1"},
                    },
                },
                timeout=10,
            ).status_code

        assert status("zm.example.com") == 200
        assert status("127.0.0.1:8787") == 200
        assert status("attacker.example") == 421
    finally:
        stop_server(process)


def test_a_loopback_bind_prints_where_it_listens_without_a_warning(http_server: Deployment) -> None:
    """What it printed as it started: the session's server, whose log also holds what the tests that ran
    before this one (in this process, in whatever order) made it say."""
    assert f"listening on {http_server.url}" in http_server.startup
    assert "warning" not in http_server.startup


def test_the_server_runs_numpy_on_one_blas_thread_unless_the_environment_says_otherwise() -> None:
    probe = (
        "from zero_memory.server.process import one_blas_thread\n"
        "from threadpoolctl import threadpool_info\n"
        "one_blas_thread()\n"
        "print(max(pool['num_threads'] for pool in threadpool_info() if pool['user_api'] == 'blas'))\n"
    )
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}

    def threads(env: dict[str, str]) -> str:
        return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True).stdout.strip()

    assert threads(clean) == "1"
    assert threads({**clean, "OPENBLAS_NUM_THREADS": "2"}) == "2"


def test_workers_on_a_port_in_use_fail_in_one_line(deployment: Deployment) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = zm(deployment.env, "serve", "--port", str(port), "--workers", "2", check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == f"cannot listen on 127.0.0.1:{port}: Address already in use"


def test_the_server_warms_up_before_any_call_and_healthz_says_so(deployment: Deployment) -> None:
    """The model and the index load as the server starts (server/warm.py): a first call does not wait for them."""
    log = deployment.home / "serve-warm.log"
    process, url = start_server(deployment.env, log)
    try:
        deadline = time.monotonic() + 60
        while not (health := httpx.get(f"{url}/healthz", timeout=10).json())["warm"]:
            assert time.monotonic() < deadline, health
            time.sleep(0.1)
        assert health["status"] == "ok"
    finally:
        stop_server(process)
    assert "warm-up" not in log.read_text()  # no step failed (a failure is logged as a warning)


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found[int(entry.name)] = command
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` runs: not gone, nor a zombie left for its new parent to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.anyio
async def test_zm_serve_embeds_recall_queries_in_its_query_process(deployment: Deployment) -> None:
    """On SQLite the server starts the query process after its warm-up; recalls over MCP are embedded there, and
    it ends with the server."""
    log = deployment.home / "serve-query-process.log"
    process, url = start_server(deployment.env, log)
    try:
        deadline = time.monotonic() + 60
        while not (child := [p for p, c in _children(process.pid).items() if "embedding.query_process" in c]):
            assert time.monotonic() < deadline, _children(process.pid)
            time.sleep(0.1)
        (pid,) = child
        served = Deployment(home=deployment.home, env=deployment.env, tokens=deployment.tokens, url=url)

        content = unique("Deploys go out on Tuesdays.")  # the session's data directory holds other tests' deploys

        async def recalls() -> list[dict[str, Any]]:
            async with connect(served, "http", "legacy") as client:
                await call_ok(client, "remember", {"content": content, "kind": "fact", "scope": "personal"})
                return [await call_ok(client, "recall", {"query": f"{content} {n}"}) for n in range(40)]

        time.sleep(3)  # the process has loaded its model (its ticks settle)
        before = _cpu_ticks(pid)
        answers = await recalls()
        assert all(a["hits"] and a["hits"][0]["content"] == content for a in answers)
        assert _cpu_ticks(pid) > before  # it embedded them
    finally:
        stop_server(process)
    deadline = time.monotonic() + 30
    while _running(pid):
        assert time.monotonic() < deadline, "the query process outlived its server"
        time.sleep(0.1)
    assert "query embedding process" not in log.read_text()  # no warning: it started, and was never dropped
