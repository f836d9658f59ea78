"""Each owner's daily extraction allowance: ``ZM_EXTRACT_DAILY_TOKENS``, or their own (``zm user budget``).

What counts is the usage ledger: the input and output tokens of the owner's
``extract`` calls since the last UTC midnight, failed calls included. The
allowance is checked before a chunk is accepted and again before each
extraction call, so a call already on its way can take an owner past it by
at most one chunk.

A chunk whose extraction found the allowance spent waits for the next UTC
midnight, its last error starting ``budget_exhausted:``. A raise takes effect
at once: every pass over due chunks (``extract.drain``: the server's worker,
``zm capture drain``, sending a chunk again) first brings forward the waiting
chunks of each owner who has an allowance left, whatever raised it
(``zm user budget set`` or ``clear``, a larger ``ZM_EXTRACT_DAILY_TOKENS``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from zero_memory import errors
from zero_memory.app import App
from zero_memory.capture.models import BudgetStatus
from zero_memory.capture.route import next_day
from zero_memory.clock import to_text
from zero_memory.judge.question import Purpose
from zero_memory.store import system_tx
from zero_memory.store.base import Store, Tx

WAITING = f"{errors.BUDGET_EXHAUSTED}:"
"""How the last error of a chunk waiting for its owner's allowance begins."""


def status(app: App, owner: str, now: datetime) -> BudgetStatus:
    with app.store.tx() as tx:
        tx.act_as(owner)
        return _status(tx, app.settings.capture.daily_tokens, owner, now)


def _status(tx: Tx, server_default: int, owner: str, now: datetime) -> BudgetStatus:
    own = tx.get_capture_budget(owner)
    allowance = server_default if own is None else own
    resets = next_day(now)
    spent = tx.ledger_tokens(owner=owner, purpose=Purpose.EXTRACT.value, since=resets - timedelta(days=1))
    return BudgetStatus(
        user=owner,
        daily_tokens=allowance,
        source="server" if own is None else "user",
        spent_today=spent,
        remaining=max(allowance - spent, 0),
        resets_at=to_text(resets),
    )


def require(app: App, owner: str, now: datetime) -> None:
    """``unavailable: budget_exhausted:`` when the owner has nothing left for today."""
    found = status(app, owner, now)
    if found.remaining <= 0:
        raise exhausted(found)


def release(app: App, now: datetime, *, owner: str | None = None) -> int:
    """Make due now the chunks waiting for an allowance their owner has again; how many."""
    with system_tx(app.store, "capture") as tx:
        owners = tx.owners_put_off(at=now, reason=WAITING, owner=owner)
    released = 0
    for waiting in owners:
        if status(app, waiting, now).remaining > 0:
            with system_tx(app.store, "capture", write=True) as tx:
                released += tx.bring_forward(waiting, at=now, reason=WAITING)
    return released


def exhausted(found: BudgetStatus) -> errors.ZMError:
    return errors.unavailable(
        f"today's extraction allowance of {found.daily_tokens:,} tokens is spent ({found.spent_today:,} used); "
        f"it renews at {found.resets_at} (an administrator can raise it with `zm user budget set`)",
        subcode=errors.BUDGET_EXHAUSTED,
    )


def set_budget(store: Store, user: str, daily_tokens: int, *, at: datetime) -> None:
    """Give ``user`` an allowance of their own (0 turns their capture off). Audited."""
    if daily_tokens < 0:
        raise errors.validation("daily_tokens: must be 0 or more")
    with store.tx(write=True) as tx:
        _require_user(tx, user)
        tx.set_capture_budget(user, daily_tokens, at)
        tx.add_audit(
            actor=user,
            action="capture.budget_set",
            owner=user,
            memory_ids=[],
            payload={"daily_tokens": daily_tokens},
            run_id=None,
            at=at,
        )


def clear_budget(store: Store, user: str, *, at: datetime) -> bool:
    """Back to the server's allowance; False when the user had none of their own."""
    with store.tx(write=True) as tx:
        _require_user(tx, user)
        removed = tx.clear_capture_budget(user)
        if removed:
            tx.add_audit(
                actor=user, action="capture.budget_clear", owner=user, memory_ids=[], payload={}, run_id=None, at=at
            )
    return removed


def _require_user(tx: Tx, user: str) -> None:
    tx.act_as(user)  # the allowance is theirs
    if tx.get_user(user) is None:
        raise errors.not_found(f"user {user} (create it with 'zm user add {user}')")
