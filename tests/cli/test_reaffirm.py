"""``zm reaffirm ID`` through the real binary: a person vouches that a stale core fact is still true.

``recall`` reports a core fact past its freshness budget (180 days) with
``stale_days``; re-affirming it restarts the budget, so ``stale_days`` is gone,
and the audit trail says who vouched and when. Bad input answers with the
stable prefixes.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from tests.cli.harness import Result, Zm, app_for
from zero_memory.access.caller import Caller
from zero_memory.domain.memory import Kind
from zero_memory.memory.lifecycle import forget
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember

OLD_FACT = "The corporate VPN endpoint is vpn.example.net on port 1194"
MISSING = "mem_01zzzzzzzzzzzzzzzzzzzzzzzy"


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.stderr
    return result


def refused(result: Result, prefix: str) -> None:
    assert result.exit_code == 1 and result.stderr.startswith(prefix), result.stderr


def seed(zm: Zm) -> dict[str, str]:
    """Memories written 400 days ago: a core fact, a forgotten core fact, a project decision."""
    app = app_for(zm.env)
    try:
        then = app.clock() - timedelta(days=400)
        old = dataclasses.replace(app, clock=lambda: then)
        caller = Caller("alice", client="test")

        def write(text: str, kind: str, scope: str) -> str:
            return remember(old, caller, RememberRequest(content=text, kind=Kind(kind), scope=scope)).id

        ids = {
            "fact": write(OLD_FACT, "fact", "core"),
            "gone": write("The build farm has 12 runners", "fact", "core"),
            "decision": write("We deploy with blue-green switches", "decision", "proj.alice.shop"),
        }
        forget(app, caller, ids["gone"], "decommissioned")
        return ids
    finally:
        app.close()


def stale_days(zm: Zm, memory_id: str) -> object:
    hits = ok(zm("recall", "corporate VPN endpoint", "--scope", "core", "--json")).json()["hits"]
    (hit,) = [h for h in hits if h["id"] == memory_id]
    return hit.get("stale_days")


def test_reaffirming_a_stale_core_fact_clears_stale_days_and_is_audited(zm_binary: Zm) -> None:
    zm = Zm({**zm_binary.env, "ZM_USER": "alice"}, binary=True)
    ok(zm("project", "create", "shop"))
    ids = seed(zm)
    before = stale_days(zm, ids["fact"])
    assert isinstance(before, int) and before >= 219

    done = ok(zm("reaffirm", ids["fact"], "--json")).json()
    assert done["id"] == ids["fact"] and done["stale_days_before"] == before
    assert stale_days(zm, ids["fact"]) is None
    shown = ok(zm("get", ids["fact"], "--json")).json()
    assert shown["memory"]["stale_days"] is None
    (entry,) = [a for a in shown["audit"] if a["action"] == "reaffirm"]
    assert entry["actor"] == "alice" and entry["payload"]["stale_days"] == before
    assert "re-affirmed" in ok(zm("reaffirm", ids["fact"])).stdout

    refused(zm("reaffirm", MISSING), "not_found: ")
    refused(zm("reaffirm", ids["decision"]), "validation_failed: id: ")
    refused(zm("reaffirm", ids["gone"]), "conflict: ")
    refused(zm("reaffirm", ""), "not_found: ")
