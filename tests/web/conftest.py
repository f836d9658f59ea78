"""Two ways to reach the dashboard.

In process: ``web`` is Starlette's test client on ``dashboard.routes(app)``
over the shared ``app`` fixture (fast, for the HTTP rules). Through a browser:
``start_site`` runs a real ``zm serve`` on a free loopback port with a fake
OpenAI-compatible judge behind it, and a ``Seeder`` writes into the same data
directory from the test process (SQLite takes several processes); Debian's
Chromium, driven by Playwright, does the clicking.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from tests.mcp.helpers import base_env, start_server, stop_server
from tests.web.helpers import Seeder, csrf_of
from zero_memory.access import users
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.embedding import Embedder
from zero_memory.settings import Settings
from zero_memory.web import dashboard

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "docs" / "screenshots"


# -- in process ---------------------------------------------------------------


@pytest.fixture
def web(app: App) -> Iterator[TestClient]:
    with TestClient(Starlette(routes=dashboard.routes(app)), follow_redirects=False) as client:
        yield client


def token_for(app: App, uid: str) -> str:
    with app.store.tx(write=True) as tx:
        return users.issue_token(tx, uid)


def log_in(client: TestClient, app: App, uid: str) -> None:
    page = client.get("/login")
    done = client.post("/login", data={"token": token_for(app, uid), "csrf_token": csrf_of(page.text)})
    assert done.status_code == 303, done.text


@pytest.fixture
def alice_web(web: TestClient, app: App) -> TestClient:
    log_in(web, app, "alice")
    return web


# -- a real server and a real browser ----------------------------------------------


@dataclass
class Site:
    url: str
    home: Path
    log: Path
    tokens: dict[str, str]
    seed: Seeder
    judge: FakeOpenAIServer

    @property
    def app(self) -> App:
        return self.seed.app

    def login_link(self) -> str:
        for line in self.log.read_text().splitlines():
            if line.startswith("dashboard: "):
                return line.split()[1]
        raise AssertionError(f"zm serve printed no login link:\n{self.log.read_text()}")


def judge_says_duplicate(request: RecordedRequest) -> Reply:
    """Every pair is a confident duplicate; no project memory is portable."""
    schema = request.body["response_format"]["json_schema"]["name"]
    if schema == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.3, "Specific to this repository.")
    return FakeOpenAIServer.verdict("duplicate", 0.99, "Both say the staging database listens on port 5433.")


@contextmanager
def start_site(
    home: Path, embedder: Embedder, people: tuple[str, ...] = ("alice", "bob", "carol"), **seeding_options: Any
) -> Iterator[Site]:
    """``zm serve`` on a free port (the local user is alice), a fake judge, and a seeder on the same data.

    ``seeding_options`` go to the seeder's ``build_app`` (a clock, a judge factory).
    """
    env = {**base_env(home), "ZM_USER": "alice"}
    seeding = build_app(Settings.from_environ(env), embedder=embedder, **seeding_options)
    with seeding.store.tx(write=True) as tx:
        for name in people:
            users.add_user(tx, name)
        tokens = {name: users.issue_token(tx, name) for name in people}
    judge = FakeOpenAIServer().start()
    judge.respond_with(judge_says_duplicate)
    log = home / "serve.log"
    process, url = start_server(
        {
            **env,
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": judge.base_url,
            "ZM_JUDGE_API_KEY": "sk-fake-for-tests",
        },
        log,
    )
    try:
        yield Site(url=url, home=home, log=log, tokens=tokens, seed=Seeder(seeding), judge=judge)
    finally:
        stop_server(process)
        judge.stop()
        seeding.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    # Playwright's sync API runs an event loop on the main thread while it is open: closing it with the
    # package leaves none behind for async tests of other folders that run after these.
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``docs/screenshots`` when ``ZM_UPDATE_SCREENSHOTS=1``, else a temporary folder (the tree stays clean)."""
    if os.environ.get("ZM_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")
