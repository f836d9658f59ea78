"""Property: whatever sequence of writes, forgets, restores, supersedes and moves,
every memory ever written keeps its text and is either live or restorable."""

from __future__ import annotations

import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.bootstrap import build_app
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.memory import lifecycle
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.settings import Settings
from zero_memory.store import SYSTEM

WORDS = st.sampled_from(["deploy", "cache", "port", "queue", "schema", "token", "retry", "index", "blue", "green"])
TEXTS = st.lists(WORDS, min_size=2, max_size=6).map(" ".join)
KINDS = st.sampled_from(["fact", "decision", "gotcha", "task"])
SCOPES = st.sampled_from(["personal", "core"])


class NothingIsLost(RuleBasedStateMachine):
    memories = Bundle("memories")

    def __init__(self) -> None:
        super().__init__()
        self.home = tempfile.mkdtemp(prefix="zm-prop-")
        self.app = build_app(Settings.from_environ({"ZM_HOME": self.home}), embedder=HashingEmbedder(64))
        with self.app.store.tx(write=True) as tx:
            add_user(tx, "alice", is_local=True)
        self.caller = Caller("alice", client="property", session_id=None)
        self.texts: dict[str, str] = {}

    def _remember(self, text: str, kind: str, **fields: object) -> str:
        result = remember(self.app, self.caller, RememberRequest(content=text, kind=kind, **fields))  # type: ignore[arg-type]
        if result.status == "created":
            self.texts[result.id] = text
        return result.id

    @rule(target=memories, text=TEXTS, kind=KINDS, scope=SCOPES, provisional=st.booleans())
    def write(self, text: str, kind: str, scope: str, provisional: bool) -> str:
        return self._remember(text, kind, scope=scope, provisional=provisional)

    @rule(target=memories, old=memories, text=TEXTS)
    def supersede(self, old: str, text: str) -> str:
        return self._remember(text, "fact", scope="personal", links=[{"type": "supersedes", "dst": old}])

    @rule(memory=memories)
    def forget(self, memory: str) -> None:
        lifecycle.forget(self.app, self.caller, memory)

    @rule(memory=memories)
    def restore(self, memory: str) -> None:
        lifecycle.restore_memory(self.app, self.caller, memory)

    @rule(memory=memories, scope=SCOPES)
    def move(self, memory: str, scope: str) -> None:
        lifecycle.move_memories(self.app, self.caller, [memory], scope=scope)

    @invariant()
    def every_text_is_kept(self) -> None:
        with self.app.store.tx() as tx:
            rows = tx.get_memories(list(self.texts), SYSTEM)
        assert set(rows) == set(self.texts)
        for memory_id, text in self.texts.items():
            assert rows[memory_id].content == text

    def teardown(self) -> None:
        try:
            for memory_id, text in self.texts.items():
                try:
                    lifecycle.restore_memory(self.app, self.caller, memory_id)
                except errors.ZMError as error:  # pragma: no cover - a failure here is the bug we look for
                    raise AssertionError(f"{memory_id} could not be restored: {error}") from error
                view = lifecycle.get_memory(self.app, self.caller, memory_id).memory
                assert view.status == "live" and view.content == text
            for memory_id, text in list(self.texts.items())[:5]:
                hits = recall(self.app, self.caller, text, scopes_arg=["*"], limit=50).hits
                assert memory_id in [h.id for h in hits]
        finally:
            self.app.close()
            shutil.rmtree(self.home, ignore_errors=True)


TestNothingIsLost = NothingIsLost.TestCase
TestNothingIsLost.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
