from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes import fixtures
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from zero_memory.judge.base import Judge
from zero_memory.judge.factory import build_judge
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.provider import RetryPolicy
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.settings import Settings

SERVER_KEY = "sk-server-key-0123456789"
OWNER_KEY = "sk-owner-key-abcdefghij"
STRONG = "judge-strong-1"
FAST = "judge-fast-1"

# Real backoff is half a second and up; the tests keep the shape, not the wait.
FAST_RETRY = RetryPolicy(attempts=3, initial_backoff_s=0.01, max_backoff_s=0.05)

GOTCHA = JudgedMemory(
    kind="gotcha",
    age_days=40,
    content="`uv sync` ignores the lockfile unless `--frozen` is passed; CI must run `uv sync --frozen`.",
)
SUMMARY = JudgedMemory(kind="fact", age_days=2, content="The project uses uv for dependencies.")
PAIR = PairRequest(GOTCHA, SUMMARY)
PROVISIONAL_PAIR = PairRequest(GOTCHA, SUMMARY, provisional=True)


def settings_for(provider: str, base_url: str, tmp_path: Path, **env: str) -> Settings:
    """Settings read the way the server reads them: from ZM_* variables."""
    return Settings.from_environ(
        {
            "ZM_HOME": str(tmp_path),
            "ZM_JUDGE_PROVIDER": provider,
            "ZM_JUDGE_BASE_URL": base_url,
            "ZM_JUDGE_API_KEY": SERVER_KEY,
            "ZM_HYGIENE_MODEL": STRONG,
            "ZM_HYGIENE_FAST_MODEL": FAST,
            "ZM_JUDGE_TIMEOUT_S": "5",
            **env,
        }
    )


# The shared fake-server fixtures, made visible to the tests of this directory.
openai_server = fixtures.openai_server
anthropic_server = fixtures.anthropic_server

Server = FakeOpenAIServer | FakeAnthropicServer


@dataclass
class Provider:
    """One provider and its fake server, so a test can run against either."""

    name: str
    server: Server
    tmp_path: Path

    def judge(self, api_key: str | None = None, retry: RetryPolicy = FAST_RETRY, **env: str) -> Judge:
        settings = settings_for(self.name, self.server.base_url, self.tmp_path, **env)
        return build_judge(settings, api_key=api_key, retry=retry)


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Provider:
    server: Server = request.getfixturevalue(f"{request.param}_server")
    return Provider(request.param, server, tmp_path)


@pytest.fixture
def openai_judge(openai_server: FakeOpenAIServer, tmp_path: Path) -> Callable[..., Judge]:
    return Provider("openai", openai_server, tmp_path).judge


@pytest.fixture
def anthropic_judge(anthropic_server: FakeAnthropicServer, tmp_path: Path) -> Callable[..., Judge]:
    return Provider("anthropic", anthropic_server, tmp_path).judge
