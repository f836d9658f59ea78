"""Each owner's judge: paid with their own provider key when they stored one, recorded against them.

Every judge call is attributed to the owner of the memory under review — on a
system-wide sweep too, and whoever started the run (memory-model.md, "Usage
ledger and events"). So the judge is chosen by that owner, never by the
caller:

    judge = judge_for(app, memory.owner, run_id=run.id)
    judge.judge(PairRequest(a, b, Purpose.SCAN))     # one ledger row, owner = memory.owner

``app.judge_factory`` is the seam the services use, a ``JudgeFactory``:
``(owner, run_id) -> Judge``. ``build_app`` installs ``OwnerJudges`` (which
is ``judge_for`` with a cache); tests install their own, e.g. ``lambda owner,
run_id: fake``.

Owners' keys are stored encrypted with ``ZM_SECRET_KEY`` (``zero_memory.crypto``)
by ``set_owner_key`` (``zm user key set``); nothing here logs, prints or
audits a key, and only ``key_status`` shows its last four characters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zero_memory import crypto, errors
from zero_memory.judge.base import Judge
from zero_memory.judge.factory import build_judge
from zero_memory.judge.ledger import AttributedJudge, LedgerEntry
from zero_memory.settings import DEFAULT_MODELS

if TYPE_CHECKING:
    from zero_memory.bootstrap import App
    from zero_memory.store.base import Tx

JudgeFactory = Callable[[str, str | None], Judge]
"""``(owner, run_id) -> Judge``: the judge acting for ``owner`` in run ``run_id`` (None outside a run)."""

MODEL_PROVIDERS = tuple(p for p in DEFAULT_MODELS if p != "none")
SHOWN_KEY_CHARS = 4
# Below this length the last four characters would give too much of a key away.
MIN_KEY_CHARS_TO_SHOW_END = 16


class OwnerJudges:
    """The default ``app.judge_factory``: ``judge_for`` with provider clients built once per key.

    Owners without a key of their own share the server's judge; an owner with
    one gets a judge built with it. The owner's stored ciphertext is read on
    every call — one indexed row — so a key set, replaced or cleared (by this
    process or by ``zm user key`` in another) takes effect on the next call,
    and a sweep of thousands of pairs still builds each SDK client once.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._server: Judge | None = None
        self._own: dict[str, tuple[str, Judge]] = {}  # owner -> (the ciphertext it was built from, judge)

    def __repr__(self) -> str:
        return f"OwnerJudges(provider={self.app.settings.judge_provider!r}, owners_with_own_key={len(self._own)})"

    def __call__(self, owner: str, run_id: str | None = None) -> Judge:
        settings = self.app.settings
        if settings.judge_provider == "none":
            return build_judge(settings)  # offer mode: no call, nothing to record
        return AttributedJudge(self._inner(owner), owner=owner, run_id=run_id, record=self._record)

    def forget(self, owner: str | None = None) -> None:
        """Drop cached judges (one owner's, or all): the next call builds afresh."""
        with self._lock:
            if owner is None:
                self._own.clear()
                self._server = None
            else:
                self._own.pop(owner, None)

    def _inner(self, owner: str) -> Judge:
        settings = self.app.settings
        with self.app.store.tx() as tx:
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

    def _record(self, entry: LedgerEntry) -> None:
        with self.app.store.tx(write=True) as tx:
            tx.add_ledger(
                owner=entry.owner,
                model=entry.model,
                purpose=entry.purpose,
                input_tokens=entry.input_tokens,
                output_tokens=entry.output_tokens,
                latency_ms=entry.latency_ms,
                outcome=entry.outcome,
                run_id=entry.run_id,
                at=self.app.clock(),
            )


def judge_for(app: App, owner: str, *, run_id: str | None = None) -> Judge:
    """The configured judge acting for ``owner``: their stored key if any, every call in the ledger.

    ``owner`` is the owner of the memory under review, whoever asked. With
    ``ZM_JUDGE_PROVIDER=none`` this is the offer-mode judge, which records
    nothing. Raises ``unavailable`` when the owner's stored key no longer
    decrypts (``ZM_SECRET_KEY`` changed): their calls are never silently
    moved to the server's key.
    """
    return owner_judges(app)(owner, run_id)


def owner_judges(app: App) -> OwnerJudges:
    """The app's cache when its factory is the default one; else a fresh, uncached one."""
    factory = app.judge_factory
    if isinstance(factory, OwnerJudges) and factory.app is app:
        return factory
    return OwnerJudges(app)


# -- owners' keys (zm user key) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyStatus:
    user: str
    provider: str
    set: bool
    last4: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"user": self.user, "provider": self.provider, "set": self.set, "last4": self.last4}


def key_provider(app: App, provider: str | None) -> str:
    """The provider a key is for: as named, else the configured one."""
    name = (provider or app.settings.judge_provider).strip().lower()
    if name == "none":
        raise errors.validation(
            "ZM_JUDGE_PROVIDER is none, so there is no provider to store a key for: "
            f"name one with --provider ({' or '.join(MODEL_PROVIDERS)})"
        )
    if name not in MODEL_PROVIDERS:
        raise errors.validation(f"provider: {name[:20]!r} is not one of {', '.join(MODEL_PROVIDERS)}")
    return name


def set_owner_key(app: App, user: str, provider: str | None, key: str) -> KeyStatus:
    """Store ``key`` for ``user``, encrypted; replaces any earlier one. Audited without the key."""
    name = key_provider(app, provider)
    key = key.strip()
    if not key:
        raise errors.validation("the key is empty: paste it at the prompt or pipe it on stdin")
    if any(ch.isspace() for ch in key):
        raise errors.validation("the key contains whitespace: paste the key alone, on one line")
    ciphertext = crypto.encrypt(app.settings.secret_key, key)
    now = app.clock()
    with app.store.tx(write=True) as tx:
        _require_user(tx, user)
        tx.set_provider_key(user, name, ciphertext, now)
        tx.add_audit(
            actor=user,
            action="provider_key.set",
            owner=user,
            memory_ids=[],
            payload={"provider": name},
            run_id=None,
            at=now,
        )
    owner_judges(app).forget(user)
    return KeyStatus(user, name, True, _last4(key))


def clear_owner_key(app: App, user: str, provider: str | None) -> bool:
    """Forget ``user``'s key for the provider; their calls go back to the server's key."""
    name = key_provider(app, provider)
    now = app.clock()
    with app.store.tx(write=True) as tx:
        _require_user(tx, user)
        removed = tx.delete_provider_key(user, name)
        if removed:
            tx.add_audit(
                actor=user,
                action="provider_key.clear",
                owner=user,
                memory_ids=[],
                payload={"provider": name},
                run_id=None,
                at=now,
            )
    owner_judges(app).forget(user)
    return removed


def key_status(app: App, user: str, provider: str | None) -> KeyStatus:
    """Whether ``user`` has a key for the provider, and its last four characters (it must decrypt)."""
    name = key_provider(app, provider)
    with app.store.tx() as tx:
        _require_user(tx, user)
        ciphertext = tx.get_provider_key(user, name)
    if ciphertext is None:
        return KeyStatus(user, name, False)
    return KeyStatus(user, name, True, _last4(crypto.decrypt(app.settings.secret_key, ciphertext)))


def _last4(key: str) -> str | None:
    return key[-SHOWN_KEY_CHARS:] if len(key) >= MIN_KEY_CHARS_TO_SHOW_END else None


def require_user(app: App, user: str) -> None:
    """``not_found`` unless ``user`` exists — checked before anyone is asked to type a key."""
    with app.store.tx() as tx:
        _require_user(tx, user)


def _require_user(tx: Tx, user: str) -> None:
    if tx.get_user(user) is None:
        raise errors.not_found(f"user {user} (create it with 'zm user add {user}')")
