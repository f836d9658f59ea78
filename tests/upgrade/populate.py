"""A small installation written through the API of whichever zero-memory is on the path.

``make_fixtures.py`` runs this file with an older release's ``src`` first on
``PYTHONPATH``, so it imports nothing from the tests and only what every
release since the first has had: users, a project shared with a writer,
memories of each kind, one forgotten (audit rows), one recall (a surfacing),
and a contradiction queued for review by a hygiene cycle with a scripted judge
(where the release's judge accepts one)::

    PYTHONPATH=OLD/src python tests/upgrade/populate.py DATABASE_URL HOME
"""

from __future__ import annotations

import sys
from typing import Any

from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project, grant
from zero_memory.bootstrap import build_app
from zero_memory.embedding.usem import UniversalSentenceEncoder
from zero_memory.memory.lifecycle import forget
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.settings import Settings

try:  # the first schema's release had no hygiene yet
    from zero_memory.hygiene.cycle import start_cycle
    from zero_memory.judge.fake import FakeJudge
except ImportError:
    start_cycle = None

# What the upgrade test recalls afterwards, and who may see it.
MEMORIES = [
    ("alice", "personal", "fact", "The staging database runs on port 6543"),
    ("alice", "team", "convention", "Release branches are cut every second Tuesday"),
    ("bob", "team", "decision", "We pin numpy below 3 until the vector index is ported"),
    ("bob", "personal", "preference", "Bob prefers tabs in Makefiles only"),
    ("alice", "personal", "task", "Rotate the backup encryption key"),
]
FORGOTTEN = "Rotate the backup encryption key"
# Two of alice's memories the scripted judge calls a contradiction: the cycle queues the pair.
DISPUTED = ["Deploys to production happen on Fridays", "Deploys to production never happen on Fridays"]


def contradiction_judge(*_: Any) -> Any:
    return FakeJudge(default="contradiction")


def populate(url: str, home: str) -> None:
    settings = Settings.from_environ({"ZM_HOME": home, "ZM_DATABASE_URL": url})
    judged = {"judge_factory": contradiction_judge} if start_cycle is not None else {}
    app = build_app(settings, embedder=UniversalSentenceEncoder(), **judged)
    try:
        with app.store.tx(write=True) as tx:
            if hasattr(tx, "act_as_system"):  # row-level security (0009 on): accounts are the operator's
                tx.act_as_system("operator")
            users.add_user(tx, "alice", is_local=True)
            users.add_user(tx, "bob")
            users.issue_token(tx, "bob")
            project = create_project(tx, "alice", "platform", path="/srv/platform", remote=None)
            grant(tx, "alice", project.scope, "bob", "writer")
        ids = {}
        for owner, where, kind, content in MEMORIES:
            scope = "personal" if where == "personal" else project.scope
            request = RememberRequest(content=content, kind=kind, scope=scope)  # type: ignore[arg-type]
            ids[content] = remember(app, Caller(owner, client="fixture"), request).id
        forget(app, Caller("alice", client="fixture"), ids[FORGOTTEN], reason="done")
        recall(app, Caller("bob", client="fixture"), "numpy pin")
        if start_cycle is not None:
            for content in DISPUTED:
                request = RememberRequest(content=content, kind="fact", scope="personal")  # type: ignore[arg-type]
                remember(app, Caller("alice", client="fixture"), request)
            start_cycle(app, "alice", started_by="fixture", wait=True)
    finally:
        app.close()


if __name__ == "__main__":
    populate(sys.argv[1], sys.argv[2])
