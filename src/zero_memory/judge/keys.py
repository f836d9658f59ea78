"""Owners' own provider keys (``zm user key``): their judge calls then use them.

Keys are stored encrypted with ``ZM_SECRET_KEY`` (``zero_memory.crypto``);
nothing here logs, prints or audits a key, and only ``key_status`` shows its
last four characters. ``OwnerJudges`` reads the stored ciphertext on every
call, so a key set, replaced or cleared takes effect on the next judge call,
in this process or another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from zero_memory import crypto, errors
from zero_memory.settings import DEFAULT_MODELS, Settings
from zero_memory.store.base import Store, Tx

MODEL_PROVIDERS = tuple(p for p in DEFAULT_MODELS if p != "none")
SHOWN_KEY_CHARS = 4
# Below this length the last four characters would give too much of a key away.
MIN_KEY_CHARS_TO_SHOW_END = 16


@dataclass(frozen=True, slots=True)
class KeyStatus:
    user: str
    provider: str
    set: bool
    last4: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"user": self.user, "provider": self.provider, "set": self.set, "last4": self.last4}


def key_provider(settings: Settings, provider: str | None) -> str:
    """The provider a key is for: as named, else the configured one."""
    name = (provider or settings.judge_provider).strip().lower()
    if name == "none":
        raise errors.validation(
            "ZM_JUDGE_PROVIDER is none, so there is no provider to store a key for: "
            f"name one with --provider ({' or '.join(MODEL_PROVIDERS)})"
        )
    if name not in MODEL_PROVIDERS:
        raise errors.validation(f"provider: {name[:20]!r} is not one of {', '.join(MODEL_PROVIDERS)}")
    return name


def set_owner_key(
    settings: Settings, store: Store, user: str, provider: str | None, key: str, *, at: datetime
) -> KeyStatus:
    """Store ``key`` for ``user``, encrypted; replaces any earlier one. Audited without the key."""
    name = key_provider(settings, provider)
    key = key.strip()
    if not key:
        raise errors.validation("the key is empty: paste it at the prompt or pipe it on stdin")
    if any(ch.isspace() for ch in key):
        raise errors.validation("the key contains whitespace: paste the key alone, on one line")
    ciphertext = crypto.encrypt(settings.secret_key, key)
    with store.tx(write=True) as tx:
        _require_user(tx, user)
        tx.set_provider_key(user, name, ciphertext, at)
        tx.add_audit(
            actor=user,
            action="provider_key.set",
            owner=user,
            memory_ids=[],
            payload={"provider": name},
            run_id=None,
            at=at,
        )
    return KeyStatus(user, name, True, _last4(key))


def clear_owner_key(settings: Settings, store: Store, user: str, provider: str | None, *, at: datetime) -> bool:
    """Forget ``user``'s key for the provider; their calls go back to the server's key."""
    name = key_provider(settings, provider)
    with store.tx(write=True) as tx:
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
                at=at,
            )
    return removed


def key_status(settings: Settings, store: Store, user: str, provider: str | None) -> KeyStatus:
    """Whether ``user`` has a key for the provider, and its last four characters (it must decrypt)."""
    name = key_provider(settings, provider)
    with store.tx() as tx:
        _require_user(tx, user)
        ciphertext = tx.get_provider_key(user, name)
    if ciphertext is None:
        return KeyStatus(user, name, False)
    return KeyStatus(user, name, True, _last4(crypto.decrypt(settings.secret_key, ciphertext)))


def _last4(key: str) -> str | None:
    return key[-SHOWN_KEY_CHARS:] if len(key) >= MIN_KEY_CHARS_TO_SHOW_END else None


def require_user(store: Store, user: str) -> None:
    """``not_found`` unless ``user`` exists — checked before anyone is asked to type a key."""
    with store.tx() as tx:
        _require_user(tx, user)


def _require_user(tx: Tx, user: str) -> None:
    """Checks ``user`` exists, and names them as the transaction's caller: the key is theirs."""
    tx.act_as(user)
    if tx.get_user(user) is None:
        raise errors.not_found(f"user {user} (create it with 'zm user add {user}')")
