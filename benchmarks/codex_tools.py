"""Does real Codex get zero-memory's tools on every run, set up by ``zm setup codex`` alone?

    python benchmarks/codex_tools.py [--runs 20]

Codex waits about a second for an MCP server that is not marked ``required`` and then starts without it. This
installs the pinned Codex of the tests (tests/clients/package.json), sets it up in a fresh home with ``zm
setup codex`` (nothing added by hand), points it at the tests' fake model on 127.0.0.1 and runs ``codex
exec`` ``--runs`` times, one after the other, counting the runs whose first request to the model offered the
zero-memory tools; it prints the count, each run's wall time and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.clients.harness import CODEX_NAMESPACE, Agents, install_clients  # noqa: E402
from tests.fakes.agent_model import FakeAgentModel, say  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    install_clients()
    work = Path(tempfile.mkdtemp(prefix="zm-codex-"))
    home = work / "home"
    home.mkdir()
    load_before = os.getloadavg()[0]
    offered, seconds = 0, []
    with FakeAgentModel() as model:
        agents = Agents(home=home, zm_home=work / "zm-home", model=model)
        repo = agents.repo("work/api")
        agents.zm("setup", "codex")
        agents.use_fake_model_in_codex()
        for _ in range(args.runs):
            first = len(model.turns())
            model.script(say("done"))
            started = time.monotonic()
            run = agents.codex("What is left to do here?", repo)
            seconds.append(round(time.monotonic() - started, 2))
            tools = model.turns()[first].body.get("tools", []) if run.returncode == 0 else []
            offered += any(t.get("name") == CODEX_NAMESPACE for t in tools)
    figures = {
        "runs": args.runs,
        "tools_offered": offered,
        "run_seconds": seconds,
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>14}: {value}")


if __name__ == "__main__":
    main()
