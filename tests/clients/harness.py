"""The real coding agents, run as a new user runs them: a temporary home, ``zm setup``, then the client's CLI.

Claude Code (``claude -p``) and Codex (``codex exec``) are the pinned npm
packages of tests/clients/package.json, installed into tests/clients/node_modules
on first use, with the MCP Inspector's CLI, which stands in for Cursor (no CLI
here). Each agent talks to a ``FakeAgentModel`` on 127.0.0.1 that plays the
model from a script, and starts the real ``zm mcp`` itself from the
configuration ``zm setup`` wrote. Nothing reaches the internet: the clients'
update checks, telemetry and error reports are turned off, and every run is
bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.agent_model import FakeAgentModel, Turn, call
from tests.mcp.helpers import ZM
from tests.npm_lock import installing

CLIENTS_DIR = Path(__file__).resolve().parent
BIN = CLIENTS_DIR / "node_modules" / ".bin"
RUN_TIMEOUT_S = 120
# Claude Code names an MCP tool mcp__<server>__<tool>; Codex offers a server's tools as one namespace.
CLAUDE_PREFIX = "mcp__zero-memory__"
CODEX_NAMESPACE = "mcp__zero_memory"
# Claude Code sends the SessionStart hook's context to the model under this heading.
HOOK_CONTEXT = "SessionStart hook additional context:"
BRIEFING_HEADING = "# zero-memory briefing"
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "RUST_LOG": "error",
}


def install_clients() -> None:
    """Install the pinned clients with ``npm ci`` unless they are there; skip when node or npm is missing."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: the real-client tests need node 20 and npm")
    with installing(CLIENTS_DIR):
        if all((BIN / name).exists() for name in ("claude", "codex", "mcp-inspector")):
            return
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLIENTS_DIR, check=True, timeout=600
        )


def claude_calls(tool: str, arguments: dict[str, Any]) -> list[Turn]:
    """What a model does in Claude Code to call a zero-memory tool: load its schema (the tools are deferred
    behind ToolSearch), then call it."""
    name = CLAUDE_PREFIX + tool
    return [call("ToolSearch", {"query": f"select:{name}"}), call(name, arguments)]


def codex_call(tool: str, arguments: dict[str, Any]) -> Turn:
    return call(tool, arguments, namespace=CODEX_NAMESPACE)


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class Agents:
    """A user's home with zero-memory set up for the real clients, and the fake model they talk to."""

    home: Path
    zm_home: Path
    model: FakeAgentModel

    def zm(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``zm`` as the user runs it in a shell: the data directory in ``ZM_HOME``, ``env`` on top."""
        env = {**self.env(), "ZM_HOME": str(self.zm_home), "COLUMNS": "200", **(env or {})}
        return subprocess.run(
            [ZM, *args], env=env, input=input, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=check
        )

    def env(self) -> dict[str, str]:
        """The clients' environment: no ZM_* variable, so the configuration ``zm setup`` wrote must carry them."""
        return {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "LANG": "C.UTF-8", **QUIET}

    def repo(self, path: str) -> Path:
        """A git repository at ``home/path``."""
        folder = self.home / path
        folder.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
        return folder

    def folder(self, path: str) -> Path:
        folder = self.home / path
        folder.mkdir(parents=True)
        return folder

    def capture_env(self) -> dict[str, str]:
        """What ``zm setup --capture`` needs where it runs: an extraction model (the fake one)."""
        return {
            "ZM_JUDGE_PROVIDER": "anthropic",
            "ZM_EXTRACT_MODEL": "fake-claude",
            "ZM_JUDGE_BASE_URL": self.model.url,
        }

    def seed(self, project: Path, memories: list[dict[str, str]]) -> None:
        """Import ``memories`` (content, kind) into ``project``'s project with ``zm import``."""
        data = self.home.parent / "seed.jsonl"
        data.write_text("".join(json.dumps(memory) + "\n" for memory in memories))
        imported = json.loads(self.zm("import", str(data), "--project", str(project), "--json").stdout)
        assert imported["imported"] == len(memories), imported

    def projects(self) -> list[str]:
        """The project scopes the store holds."""
        listed = self.zm("project", "list", "--json").stdout
        return sorted(p["scope"] for p in json.loads(listed))

    # -- the clients ---------------------------------------------------------

    def claude(self, prompt: str, cwd: Path, *flags: str) -> Run:
        """``claude -p PROMPT`` in ``cwd``, zero-memory's tools allowed to run; the JSON result on stdout."""
        env = {**self.env(), "ANTHROPIC_BASE_URL": self.model.url, "ANTHROPIC_API_KEY": "sk-fake-for-tests"}
        args = ["-p", prompt, "--output-format", "json", "--allowedTools", CLAUDE_PREFIX.rstrip("_"), *flags]
        return self._run([str(BIN / "claude"), *args], cwd, env)

    def claude_mcp_list(self, cwd: Path) -> Run:
        env = {**self.env(), "ANTHROPIC_BASE_URL": self.model.url, "ANTHROPIC_API_KEY": "sk-fake-for-tests"}
        return self._run([str(BIN / "claude"), "mcp", "list"], cwd, env)

    def use_fake_model_in_codex(self) -> None:
        """Point Codex at the fake model, in ~/.codex/config.toml: the model and provider keys at the top (before
        any table), the custom provider's table at the end."""
        config = self.home / ".codex" / "config.toml"
        existing = config.read_text() if config.exists() else ""
        provider = (
            f'\n[model_providers.fake]\nname = "fake"\nbase_url = "{self.model.url}/v1"\n'
            'wire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n'
        )
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('model = "fake-model"\nmodel_provider = "fake"\n' + existing + provider)

    def codex(self, prompt: str, cwd: Path, *flags: str) -> Run:
        """``codex exec PROMPT`` in ``cwd`` with no approvals and no sandbox, so a tool call just runs."""
        env = {**self.env(), "FAKE_MODEL_KEY": "sk-fake-for-tests"}
        args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *flags, prompt]
        return self._run([str(BIN / "codex"), *args], cwd, env)

    def inspector(self, config: Path, *args: str) -> Run:
        """The MCP Inspector's CLI on the server ``config`` (an ``mcpServers`` file) names ``zero-memory``."""
        argv = [str(BIN / "mcp-inspector"), "--cli", "--config", str(config), "--server", "zero-memory", *args]
        return self._run(argv, self.home, self.env())

    @staticmethod
    def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> Run:
        started = time.monotonic()
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
        return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


TOPICS = ["export", "billing", "search", "auth", "queue", "cache", "upload", "report", "invoice", "webhook"]
KINDS = ["decision", "convention", "gotcha", "task", "preference"]
REASON = (
    " We chose this after the incident review of {topic}: the alternatives were slower under load, harder to"
    " operate at night, and broke the {topic} dashboards twice; revisit only with numbers from production"
    " traces, and keep the runbook for {topic} in step with it."
)


def project_memories(length: str) -> list[dict[str, str]]:
    """Forty memories of a project: one line each (short), or each with its paragraph of reasons (long)."""
    memories = []
    for n in range(40):
        topic, kind = TOPICS[n % len(TOPICS)], KINDS[n % len(KINDS)]
        content = f"The {topic} service ({kind} {n}) keeps its {n + 2} workers behind the {TOPICS[n // 4]} gateway."
        memories.append({"content": content + (REASON.format(topic=topic) if length == "long" else ""), "kind": kind})
    return memories


def briefings(request_body: Any) -> list[str]:
    """Every zero-memory briefing in what Claude Code handed the model, as the model sees it."""
    found: list[str] = []
    for message in request_body.get("messages") or []:
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content
        for block in blocks:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and BRIEFING_HEADING in text:
                # Claude Code puts its own sections (``# Environment``, ...) after the hook's context.
                found.extend(BRIEFING_HEADING + part.split("\n# ")[0] for part in text.split(BRIEFING_HEADING)[1:])
    return found
