"""How soon a freshly started ``zm mcp`` answers: ``initialize``, ``tools/list``, then a first tool call.

    python benchmarks/mcp_start.py [--runs 20] [--home DIR] [--zm PATH] [--think SECONDS]

Each run starts a new ``zm mcp`` process (cold: nothing of it is loaded yet)
on one data directory and speaks MCP to it over its stdin and stdout as a
client does: ``initialize`` at once, then ``notifications/initialized`` and
``tools/list``, then one ``recall``, ``--think`` seconds after the tools came
(a client's model answers its user before it calls a tool: seconds). It
prints the time from the process's start to each answer, and the first
recall's own time (from the call to its answer), p50 and p95 over the runs,
beside what the clients
allow: Codex waits about a second for a server that is not marked
``required`` before it starts without its tools, and its own
``startup_timeout_sec`` (10 s) for one that is; Claude Code waits
``MCP_TIMEOUT`` (30 s by default). The load average (1, 5, 15 minutes) is
printed before and after: on a shared machine it says how much the numbers
owe to other work.

Without ``--home`` the data directory is a new temporary one, its store made
by one unmeasured run first (a user's store exists before a client starts
the server).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

CODEX_WAIT_S = 1.0
CODEX_STARTUP_TIMEOUT_S = 10.0
CLAUDE_CODE_TIMEOUT_S = 30.0
ANSWER_TIMEOUT_S = 120.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--home", help="the data directory (default: a new temporary one)")
    parser.add_argument("--zm", default=str(Path(sys.executable).with_name("zm")), help="the zm to start")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between the tools and the first call")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zm-mcp-start-") as scratch:
        home = args.home or scratch
        env = {**os.environ, "ZM_HOME": home}
        if args.home is None:
            one_run(args.zm, env, 0.0)  # makes the store; not measured
        before = os.getloadavg()
        runs = [one_run(args.zm, env, args.think) for _ in range(args.runs)]
        after = os.getloadavg()
    print(f"zm mcp, {args.runs} cold starts on {os.cpu_count()} cores, the first call {args.think:g} s after the tools")
    print(f"load average before {_load(before)}, after {_load(after)}")
    for name, index in (("initialize", 0), ("tools/list", 1), ("first recall", 2), ("… its own time", 3)):
        times = sorted(run[index] for run in runs)
        print(
            f"{name:>13}: p50 {statistics.median(times):.3f} s  p95 {_p95(times):.3f} s  "
            f"min {times[0]:.3f} s  max {times[-1]:.3f} s"
        )
    within = sum(run[1] <= CODEX_WAIT_S for run in runs)
    print(
        f"tools/list within Codex's ~{CODEX_WAIT_S:.0f} s wait: {within}/{args.runs}; "
        f"Codex's startup_timeout_sec {CODEX_STARTUP_TIMEOUT_S:.0f} s (required servers), "
        f"Claude Code's MCP_TIMEOUT {CLAUDE_CODE_TIMEOUT_S:.0f} s"
    )


def one_run(zm: str, env: dict[str, str], think: float) -> tuple[float, float, float, float]:
    """Seconds from the start to the answers to initialize, tools/list and a first recall (sent ``think``
    seconds after the tools came), and from that call to its answer."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [zm, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        _send(process.stdin, 1, "initialize", _hello())
        _answer(process.stdout, 1)
        initialized = time.perf_counter() - started
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        _send(process.stdin, 2, "tools/list", {})
        tools = _answer(process.stdout, 2)
        listed = time.perf_counter() - started
        assert any(tool["name"] == "recall" for tool in tools["tools"]), tools
        time.sleep(think)
        sent = time.perf_counter()
        _send(process.stdin, 3, "tools/call", {"name": "recall", "arguments": {"query": "how do we deploy"}})
        _answer(process.stdout, 3)
        called = time.perf_counter() - started
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    return initialized, listed, called, started + called - sent


def _hello() -> dict[str, Any]:
    return {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp-start-benchmark", "version": "1"},
    }


def _send(stream: IO[str], ident: int, method: str, params: dict[str, Any]) -> None:
    stream.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
    stream.flush()


def _answer(stream: IO[str], ident: int) -> dict[str, Any]:
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            raise RuntimeError("zm mcp closed its output before answering")
        message = json.loads(line)
        if message.get("id") == ident:
            if "error" in message:
                raise RuntimeError(f"zm mcp answered {message['error']}")
            result: dict[str, Any] = message["result"]
            return result
    raise RuntimeError(f"no answer to request {ident} in {ANSWER_TIMEOUT_S:.0f} s")


def _p95(times: list[float]) -> float:
    return times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]


def _load(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.2f}" for value in load)


if __name__ == "__main__":
    main()
