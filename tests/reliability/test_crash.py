"""SIGKILL ``zm serve`` mid-work, start it again on the same data, and check what survived.

On SQLite and on PostgreSQL: a burst of writes from four clients over HTTP,
and a hygiene run whose judge (a fake OpenAI-compatible server) answers
slowly. ``tests/reliability/crash.py`` holds the scenarios and their checks;
``benchmarks/crash.py`` repeats them many times.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.pg import PgServer, pg_server  # noqa: F401  (fixtures)
from tests.reliability.crash import SlowJudge, hygiene_cycle, judge_env, write_burst_cycle
from tests.reliability.service import deploy, running

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # ~40 s alone; over 120 s at load average 17


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None: the data directory's SQLite file; else a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    yield url
    server.drop(url)


def test_every_acknowledged_write_survives_a_kill_mid_burst(tmp_path: Path, database_url: str | None) -> None:
    service = deploy(tmp_path, database_url)
    with running(service):
        log = write_burst_cycle(service, kill_after=24)
    assert len(log.acked) >= 24
    # Four writers were busy when the server died: the kill fell between acknowledgements, not after them.
    assert log.in_flight_at_kill >= 1


def test_a_hygiene_run_killed_mid_way_is_interrupted_and_the_next_run_finishes_its_work(
    tmp_path: Path, database_url: str | None
) -> None:
    judge = SlowJudge(delay_s=0.3)
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        service = deploy(tmp_path, database_url, env=judge_env(fake))
        with running(service):
            crash = hygiene_cycle(service, judge, kill_at=3)
    # Two pairs were settled before the kill, the third was in the judge's hands: asked again, once.
    assert len(crash.asked_before) == 3
    assert crash.asked_before[2] in crash.asked_after
    assert crash.asked_before[0] not in crash.asked_after
