"""Each owner's judge: paid with their own provider key when they stored one, recorded against them.

Every judge call is attributed to the owner of the memory under review — on a
system-wide sweep too, and whoever started the run (docs/spec/memory-model.md,
"Usage ledger and events"). So the judge is chosen by that owner, never by the
caller, and every service looks it up the same way:

    judge = judge_for(app.judge_factory, memory.owner, run.id)
    judge.ask(PairRequest(a, b, Purpose.SCAN))       # one ledger row, owner = memory.owner

``app.judge_factory`` is a ``JudgeFactory``: ``(owner, run_id) -> Judge``.
``build_app`` installs ``OwnerJudges``; tests install their own, e.g.
``lambda owner, run_id: fake``. Owners' keys are managed in ``judge.keys``.
"""

from __future__ import annotations

import threading
from typing import Any

from zero_memory import crypto, errors
from zero_memory.clock import Clock
from zero_memory.judge.base import FailureKind, Judge, JudgeFactory, JudgeFailure, Usage
from zero_memory.judge.factory import build_judge
from zero_memory.judge.ledger import AttributedJudge, LedgerEntry, Recorder
from zero_memory.judge.question import Question
from zero_memory.settings import Settings
from zero_memory.store.base import Store


def judge_for(factory: JudgeFactory, owner: str, run_id: str | None = None) -> Judge:
    """The judge acting for ``owner`` (the owner of the memory under review, whoever asked).

    When the owner's judge cannot be built — their stored key no longer
    decrypts because ``ZM_SECRET_KEY`` changed — the answer is a judge whose
    every request fails closed: their calls are never silently moved to the
    server's key, and their pairs are tried again on a later run.
    """
    try:
        return factory(owner, run_id)
    except errors.ZMError as error:
        return UnavailableJudge(str(error))


def ledger_recorder(store: Store, clock: Clock) -> Recorder:
    """Writes one usage-ledger row per call: how ``OwnerJudges`` records; tests wrap a fake judge with it."""

    def record(entry: LedgerEntry) -> None:
        with store.tx(write=True) as tx:
            tx.act_as(entry.owner)
            tx.add_ledger(
                owner=entry.owner,
                model=entry.model,
                purpose=entry.purpose,
                input_tokens=entry.input_tokens,
                output_tokens=entry.output_tokens,
                latency_ms=entry.latency_ms,
                outcome=entry.outcome,
                run_id=entry.run_id,
                at=clock(),
            )

    return record


class UnavailableJudge:
    """Stands in when an owner's judge cannot be built; every request fails closed."""

    provider = "unavailable"
    offer_mode = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def model_for(self, question: Question[Any]) -> str:
        return "unavailable"

    def ask(self, question: Question[Any]) -> JudgeFailure:
        return JudgeFailure(FailureKind.UNAVAILABLE, self.reason, Usage(model="unavailable"))


class OwnerJudges:
    """The default ``app.judge_factory``: provider clients built once per key, every call in the ledger.

    Owners without a key of their own share the server's judge; an owner with
    one gets a judge built with it. The owner's stored ciphertext is read on
    every call — one indexed row — so a key set, replaced or cleared (by this
    process or by ``zm user key`` in another) takes effect on the next call,
    and a sweep of thousands of pairs still builds each SDK client once.
    """

    def __init__(self, settings: Settings, store: Store, clock: Clock) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self._lock = threading.Lock()
        self._server: Judge | None = None
        self._own: dict[str, tuple[str, Judge]] = {}  # owner -> (the ciphertext it was built from, judge)
        self._record = ledger_recorder(store, clock)

    def __repr__(self) -> str:
        return f"OwnerJudges(provider={self.settings.judge_provider!r}, owners_with_own_key={len(self._own)})"

    def __call__(self, owner: str, run_id: str | None = None) -> Judge:
        if self.settings.judge_provider == "none":
            return build_judge(self.settings)  # offer mode: no call, nothing to record
        return AttributedJudge(self._inner(owner), owner=owner, run_id=run_id, record=self._record)

    def _inner(self, owner: str) -> Judge:
        settings = self.settings
        with self.store.tx() as tx:
            tx.act_as(owner)
            ciphertext = tx.get_provider_key(owner, settings.judge_provider)
        with self._lock:
            if ciphertext is None:
                self._own.pop(owner, None)
                if self._server is None:
                    self._server = build_judge(settings)
                return self._server
            cached = self._own.get(owner)
            if cached is not None and cached[0] == ciphertext:
                return cached[1]
        # Decrypt and build outside the lock; a race only builds one client twice.
        judge = build_judge(settings, api_key=crypto.decrypt(settings.secret_key, ciphertext))
        with self._lock:
            self._own[owner] = (ciphertext, judge)
        return judge
