"""The bad-input table: one row per (tool, kind of bad input), with the stable prefix it must answer.

Argument values that start with ``@`` name a seeded id (``@fact``, ``@bob_single``,
``@missing_dispute``…; see ``conftest.Seed``). Every row is a refusal: the
test sends it, checks the prefix, and checks that the database did not change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

import pytest

from tests.badinput.conftest import Seed

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_KEY_ID = "AKIA" + "Z7Q3XKJ4M2P5R8T6"
NUL, SURROGATE, RTL, EMOJI = "\x00", "\ud800", "\u202e", "\U0001f600"
OVERSIZED = "x" * 16_001
LONG_ID = "mem_" + "0" * 97  # 101 characters

NOTE = {"content": "A note for the bad-input table", "kind": "fact", "scope": "personal"}
QUERY = {"query": "release checklist"}


def note(**changes: Any) -> dict[str, Any]:
    """A valid remember call with ``changes`` (a value of ``...`` removes the field)."""
    return {k: v for k, v in {**NOTE, **changes}.items() if v is not ...}


CHUNK = {"transcript_chunk": "user: how do we deploy?\n", "conversation_id": "conv-bad", "project_hint": "badinput"}


def chunk(**changes: Any) -> dict[str, Any]:
    """A valid ingest_conversation call with ``changes`` (a value of ``...`` removes the field)."""
    return {k: v for k, v in {**CHUNK, **changes}.items() if v is not ...}


def query(**changes: Any) -> dict[str, Any]:
    return {k: v for k, v in {**QUERY, **changes}.items() if v is not ...}


def supersedes(*targets: str) -> list[dict[str, str]]:
    return [{"type": "supersedes", "dst": target} for target in targets]


@dataclass(frozen=True)
class Row:
    tool: str
    arguments: dict[str, Any]
    expected: str


# id -> row. Ids say what is wrong; the categories of issue 9 are all here for every tool that has them.
ROWS: dict[str, Row] = {
    # -- remember --------------------------------------------------------------------------------------
    "remember/content-wrong-type": Row(
        "remember", note(content=42), "validation_failed: content: Input should be a valid string"
    ),
    "remember/kind-wrong-type": Row("remember", note(kind=["fact"]), "validation_failed: kind: Input should be"),
    "remember/scope-wrong-type": Row(
        "remember", note(scope=1), "validation_failed: scope: Input should be a valid string"
    ),
    "remember/provisional-as-string": Row("remember", note(provisional="true"), "validation_failed: provisional:"),
    "remember/links-not-a-list": Row("remember", note(links={"type": "supersedes"}), "validation_failed: links:"),
    "remember/source-not-an-object": Row("remember", note(source="thread-1"), "validation_failed: source:"),
    "remember/session-id-wrong-type": Row("remember", note(session_id=7), "validation_failed: session_id:"),
    "remember/missing-content": Row("remember", note(content=...), "validation_failed: content: required"),
    "remember/missing-kind": Row("remember", note(kind=...), "validation_failed: kind: required"),
    "remember/no-arguments": Row("remember", {}, "validation_failed: content: required; kind: required"),
    "remember/unknown-field": Row("remember", note(tags=["a"]), "validation_failed: tags: unknown argument"),
    "remember/unknown-field-in-a-link": Row(
        "remember",
        note(links=[{"type": "relates_to", "dst": "@fact", "weight": 1}]),
        "validation_failed: links[0].weight: unknown argument",
    ),
    "remember/unknown-field-in-source": Row(
        "remember", note(source={"url": "u"}), "validation_failed: source.url: unknown argument"
    ),
    "remember/empty-content": Row("remember", note(content=""), "validation_failed: content: must not be empty"),
    "remember/blank-content": Row("remember", note(content=" \n\t "), "validation_failed: content: must not be empty"),
    "remember/oversized-content": Row(
        "remember", note(content=OVERSIZED), "validation_failed: content: 16001 characters"
    ),
    "remember/unknown-kind": Row("remember", note(kind="rumour"), "validation_failed: kind: Input should be"),
    "remember/kind-wrong-case": Row("remember", note(kind="Fact"), "validation_failed: kind: Input should be"),
    "remember/kind-with-rtl-mark": Row("remember", note(kind="fact" + RTL), "validation_failed: kind: Input should be"),
    "remember/unknown-project-scope": Row("remember", note(scope="proj.nope"), "validation_failed: scope:"),
    "remember/another-users-scope": Row("remember", note(scope="user.bob"), "validation_failed: scope:"),
    "remember/malformed-scope": Row("remember", note(scope="core..x"), "validation_failed: scope:"),
    "remember/no-target": Row(
        "remember", note(scope=..., session_id="badinput-fresh-session"), "validation_failed: scope_target_required:"
    ),
    "remember/unresolvable-hint": Row(
        "remember", note(scope=..., project_hint="  "), "validation_failed: project_hint_unresolvable:"
    ),
    "remember/secret-in-content": Row(
        "remember",
        note(content=f"the token is {GITHUB_TOKEN}"),
        "validation_failed: secret_content_rejected: content github_token",
    ),
    "remember/secret-in-source": Row(
        "remember",
        note(source={"thread": f"aws {AWS_KEY_ID}"}),
        "validation_failed: secret_content_rejected: source.thread",
    ),
    "remember/link-without-dst": Row(
        "remember", note(links=[{"type": "supersedes"}]), "validation_failed: links[0].dst: required"
    ),
    "remember/link-unknown-type": Row(
        "remember",
        note(links=[{"type": "replaces", "dst": "@fact"}]),
        "validation_failed: links[0].type: Input should be",
    ),
    "remember/link-contradicts-is-not-declarable": Row(
        "remember", note(links=[{"type": "contradicts", "dst": "@fact"}]), "validation_failed: links[0].type:"
    ),
    "remember/link-empty-dst": Row(
        "remember", note(links=[{"type": "relates_to", "dst": ""}]), "validation_failed: links[0].dst:"
    ),
    "remember/link-oversized-dst": Row(
        "remember", note(links=[{"type": "relates_to", "dst": LONG_ID}]), "validation_failed: links[0].dst:"
    ),
    "remember/link-as-a-bare-id": Row("remember", note(links=["@fact"]), "validation_failed: links[0]:"),
    "remember/eleven-supersedes": Row(
        "remember", note(links=supersedes(*[f"mem_{i:026d}" for i in range(11)])), "validation_failed: links:"
    ),
    "remember/provisional-supersede": Row(
        "remember", note(provisional=True, links=supersedes("@fact")), "validation_failed: links:"
    ),
    "remember/nul-in-content": Row("remember", note(content=f"a{NUL}b"), "validation_failed: content: contains a NUL"),
    "remember/surrogate-in-content": Row(
        "remember", note(content=f"a{SURROGATE}b"), "validation_failed: content: is not valid Unicode"
    ),
    "remember/nul-in-scope": Row("remember", note(scope=f"personal{NUL}"), "validation_failed: scope: contains a NUL"),
    "remember/surrogate-in-a-link": Row(
        "remember", note(links=supersedes(SURROGATE)), "validation_failed: links[0].dst: is not valid Unicode"
    ),
    "remember/nul-in-an-argument-name": Row(
        "remember", note(**{f"kind{NUL}": "fact"}), "validation_failed: <unnamed>:"
    ),
    # -- recall ----------------------------------------------------------------------------------------
    "recall/query-wrong-type": Row(
        "recall", query(query=42), "validation_failed: query: Input should be a valid string"
    ),
    "recall/scopes-not-a-list": Row(
        "recall", query(scopes="personal"), "validation_failed: scopes: Input should be a valid array"
    ),
    "recall/kinds-not-a-list": Row(
        "recall", query(kinds="fact"), "validation_failed: kinds: Input should be a valid array"
    ),
    "recall/limit-as-string": Row(
        "recall", query(limit="7"), "validation_failed: limit: Input should be a valid integer"
    ),
    "recall/limit-as-float": Row(
        "recall", query(limit=1.5), "validation_failed: limit: Input should be a valid integer"
    ),
    "recall/limit-as-bool": Row(
        "recall", query(limit=True), "validation_failed: limit: Input should be a valid integer"
    ),
    "recall/missing-query": Row("recall", {}, "validation_failed: query: required"),
    "recall/unknown-field": Row("recall", query(top_k=3), "validation_failed: top_k: unknown argument"),
    "recall/empty-query": Row("recall", query(query=""), "validation_failed: query: must not be empty"),
    "recall/oversized-query": Row("recall", query(query="q" * 4_001), "validation_failed: query: 4001 characters"),
    "recall/unknown-kind": Row("recall", query(kinds=["rumour"]), "validation_failed: kinds[0]: Input should be"),
    "recall/unknown-scope": Row("recall", query(scopes=["proj.nope"]), "validation_failed: scope:"),
    "recall/another-users-scope": Row("recall", query(scopes=["user.bob"]), "validation_failed: scope:"),
    "recall/limit-zero": Row(
        "recall", query(limit=0), "validation_failed: limit: Input should be greater than or equal to 1"
    ),
    "recall/limit-over-50": Row(
        "recall", query(limit=51), "validation_failed: limit: Input should be less than or equal to 50"
    ),
    "recall/secret-in-query": Row(
        "recall", query(query=f"where is {GITHUB_TOKEN}"), "validation_failed: secret_content_rejected: query"
    ),
    "recall/nul-in-query": Row("recall", query(query=NUL), "validation_failed: query: contains a NUL"),
    "recall/surrogate-in-a-scope": Row(
        "recall", query(scopes=[SURROGATE]), "validation_failed: scopes[0]: is not valid Unicode"
    ),
    "recall/unresolvable-hint": Row("recall", query(project_hint=" "), "validation_failed: project_hint_unresolvable:"),
    # -- get_memory ------------------------------------------------------------------------------------
    "get_memory/missing-id": Row("get_memory", {"id": "@missing_memory"}, "not_found: no memory"),
    "get_memory/id-wrong-type": Row("get_memory", {"id": 5}, "validation_failed: id: Input should be a valid string"),
    "get_memory/no-id": Row("get_memory", {}, "validation_failed: id: required"),
    "get_memory/unknown-field": Row(
        "get_memory", {"id": "@fact", "full": True}, "validation_failed: full: unknown argument"
    ),
    "get_memory/empty-id": Row("get_memory", {"id": ""}, "not_found:"),
    "get_memory/emoji-id": Row("get_memory", {"id": f"mem_{EMOJI}"}, "not_found:"),
    "get_memory/rtl-id": Row("get_memory", {"id": f"{RTL}mem_x"}, "not_found:"),
    "get_memory/oversized-id": Row("get_memory", {"id": "mem_" + "x" * 20_000}, "not_found:"),
    "get_memory/nul-in-id": Row("get_memory", {"id": NUL}, "validation_failed: id: contains a NUL"),
    "get_memory/surrogate-in-id": Row("get_memory", {"id": SURROGATE}, "validation_failed: id: is not valid Unicode"),
    # -- build_context ---------------------------------------------------------------------------------
    "build_context/topic-wrong-type": Row(
        "build_context", {"topic": 42}, "validation_failed: topic: Input should be a valid string"
    ),
    "build_context/limit-zero": Row(
        "build_context", {"limit": 0}, "validation_failed: limit: Input should be greater than or equal to 1"
    ),
    "build_context/limit-as-string": Row(
        "build_context", {"limit": "7"}, "validation_failed: limit: Input should be a valid integer"
    ),
    "build_context/unknown-field": Row("build_context", {"repo": "/srv"}, "validation_failed: repo: unknown argument"),
    "build_context/oversized-topic": Row("build_context", {"topic": "q" * 4_001}, "validation_failed: topic:"),
    "build_context/secret-in-topic": Row(
        "build_context", {"topic": f"rotate {GITHUB_TOKEN}"}, "validation_failed: secret_content_rejected: topic"
    ),
    "build_context/nul-in-hint": Row("build_context", {"project_hint": NUL}, "validation_failed: project_hint:"),
    "build_context/hint-wrong-type": Row(
        "build_context", {"project_hint": ["/srv"]}, "validation_failed: project_hint: Input should be"
    ),
    # -- forget / restore_memory / close_loop ----------------------------------------------------------
    "forget/missing-id": Row("forget", {"id": "@missing_memory"}, "not_found: no memory"),
    "forget/reason-wrong-type": Row(
        "forget", {"id": "@fact", "reason": 5}, "validation_failed: reason: Input should be a valid string"
    ),
    "forget/no-id": Row("forget", {"reason": "old"}, "validation_failed: id: required"),
    "forget/unknown-field": Row("forget", {"id": "@fact", "hard": True}, "validation_failed: hard: unknown argument"),
    "forget/secret-in-reason": Row(
        "forget",
        {"id": "@fact", "reason": f"leaked {GITHUB_TOKEN}"},
        "validation_failed: secret_content_rejected: reason",
    ),
    "forget/nul-in-reason": Row("forget", {"id": "@fact", "reason": NUL}, "validation_failed: reason: contains a NUL"),
    "restore_memory/missing-id": Row("restore_memory", {"id": "@missing_memory"}, "not_found: no memory"),
    "restore_memory/id-wrong-type": Row(
        "restore_memory", {"id": ["@fact"]}, "validation_failed: id: Input should be a valid string"
    ),
    "restore_memory/no-id": Row("restore_memory", {}, "validation_failed: id: required"),
    "restore_memory/unknown-field": Row(
        "restore_memory", {"id": "@fact", "reason": "x"}, "validation_failed: reason: unknown argument"
    ),
    "restore_memory/surrogate-in-id": Row(
        "restore_memory", {"id": SURROGATE}, "validation_failed: id: is not valid Unicode"
    ),
    "close_loop/missing-id": Row("close_loop", {"id": "@missing_memory"}, "not_found: no memory"),
    "close_loop/not-an-open-loop": Row("close_loop", {"id": "@fact"}, "validation_failed: id:"),
    "close_loop/note-wrong-type": Row(
        "close_loop", {"id": "@task", "note": {"text": "done"}}, "validation_failed: note:"
    ),
    "close_loop/no-id": Row("close_loop", {"note": "done"}, "validation_failed: id: required"),
    "close_loop/unknown-field": Row(
        "close_loop", {"id": "@task", "outcome": "done"}, "validation_failed: outcome: unknown argument"
    ),
    "close_loop/secret-in-note": Row(
        "close_loop",
        {"id": "@task", "note": f"used {GITHUB_TOKEN}"},
        "validation_failed: secret_content_rejected: note",
    ),
    "close_loop/nul-in-note": Row(
        "close_loop", {"id": "@task", "note": NUL}, "validation_failed: note: contains a NUL"
    ),
    # -- move_memories ---------------------------------------------------------------------------------
    "move_memories/ids-not-a-list": Row(
        "move_memories", {"ids": "@fact", "scope": "core"}, "validation_failed: ids: Input should be a valid array"
    ),
    "move_memories/id-wrong-type": Row("move_memories", {"ids": [5], "scope": "core"}, "validation_failed: ids[0]:"),
    "move_memories/no-ids": Row("move_memories", {"scope": "core"}, "validation_failed: ids: required"),
    "move_memories/empty-ids": Row("move_memories", {"ids": [], "scope": "core"}, "validation_failed: ids:"),
    "move_memories/101-ids": Row("move_memories", {"ids": ["@fact"] * 101, "scope": "core"}, "validation_failed: ids:"),
    "move_memories/no-target": Row("move_memories", {"ids": ["@fact"]}, "validation_failed:"),
    "move_memories/two-targets": Row(
        "move_memories", {"ids": ["@fact"], "scope": "core", "project_hint": "/srv/x"}, "validation_failed:"
    ),
    "move_memories/unknown-field": Row(
        "move_memories",
        {"ids": ["@fact"], "scope": "core", "force": True},
        "validation_failed: force: unknown argument",
    ),
    "move_memories/unknown-scope": Row(
        "move_memories", {"ids": ["@fact"], "scope": "proj.nope"}, "validation_failed: scope:"
    ),
    "move_memories/another-users-scope": Row(
        "move_memories", {"ids": ["@fact"], "scope": "user.bob.core"}, "validation_failed: scope:"
    ),
    "move_memories/unresolvable-hint": Row(
        "move_memories", {"ids": ["@fact"], "project_hint": " "}, "validation_failed: project_hint_unresolvable:"
    ),
    "move_memories/nul-in-an-id": Row(
        "move_memories", {"ids": ["@fact", NUL], "scope": "core"}, "validation_failed: ids[1]: contains a NUL"
    ),
    # -- link ------------------------------------------------------------------------------------------
    "link/missing-src": Row(
        "link", {"src": "@missing_memory", "dst": "@fact", "type": "relates_to"}, "not_found: no memory"
    ),
    "link/missing-dst": Row(
        "link", {"src": "@fact", "dst": "@missing_memory", "type": "relates_to"}, "not_found: no memory"
    ),
    "link/self": Row("link", {"src": "@fact", "dst": "@fact", "type": "relates_to"}, "validation_failed: dst:"),
    "link/supersedes-is-not-a-link": Row(
        "link", {"src": "@fact", "dst": "@task", "type": "supersedes"}, "validation_failed: type:"
    ),
    "link/no-type": Row("link", {"src": "@fact", "dst": "@task"}, "validation_failed: type: required"),
    "link/src-wrong-type": Row("link", {"src": 1, "dst": "@task", "type": "relates_to"}, "validation_failed: src:"),
    "link/unknown-field": Row(
        "link",
        {"src": "@fact", "dst": "@task", "type": "relates_to", "weight": 1},
        "validation_failed: weight: unknown argument",
    ),
    "link/nul-in-dst": Row(
        "link", {"src": "@fact", "dst": NUL, "type": "relates_to"}, "validation_failed: dst: contains a NUL"
    ),
    # -- challenge -------------------------------------------------------------------------------------
    "challenge/missing-id": Row(
        "challenge", {"memory_id": "@missing_memory", "reason": "wrong"}, "not_found: no memory"
    ),
    "challenge/empty-reason": Row(
        "challenge", {"memory_id": "@fact", "reason": ""}, "validation_failed: reason: must not be empty"
    ),
    "challenge/oversized-reason": Row(
        "challenge", {"memory_id": "@fact", "reason": "r" * 2_001}, "validation_failed: reason:"
    ),
    "challenge/secret-in-reason": Row(
        "challenge",
        {"memory_id": "@fact", "reason": f"see {GITHUB_TOKEN}"},
        "validation_failed: secret_content_rejected: reason",
    ),
    "challenge/oversized-id": Row(
        "challenge", {"memory_id": LONG_ID, "reason": "wrong"}, "validation_failed: memory_id:"
    ),
    "challenge/reason-wrong-type": Row(
        "challenge", {"memory_id": "@fact", "reason": ["wrong"]}, "validation_failed: reason:"
    ),
    "challenge/no-reason": Row("challenge", {"memory_id": "@fact"}, "validation_failed: reason: required"),
    "challenge/unknown-field": Row(
        "challenge",
        {"memory_id": "@fact", "reason": "wrong", "severity": 3},
        "validation_failed: severity: unknown argument",
    ),
    "challenge/surrogate-in-reason": Row(
        "challenge", {"memory_id": "@fact", "reason": SURROGATE}, "validation_failed: reason: is not valid Unicode"
    ),
    # -- scan_hygiene ----------------------------------------------------------------------------------
    "scan_hygiene/wait-as-string": Row(
        "scan_hygiene", {"wait": "yes"}, "validation_failed: wait: Input should be a valid boolean"
    ),
    "scan_hygiene/dry-run-as-number": Row(
        "scan_hygiene", {"dry_run": 1}, "validation_failed: dry_run: Input should be a valid boolean"
    ),
    "scan_hygiene/rejudge-null": Row("scan_hygiene", {"rejudge": None}, "validation_failed: rejudge:"),
    "scan_hygiene/someone-elses-memories": Row(
        "scan_hygiene", {"owner": "bob"}, "validation_failed: owner: unknown argument"
    ),
    "scan_hygiene/nul-in-session": Row(
        "scan_hygiene", {"session_id": NUL}, "validation_failed: session_id: contains a NUL"
    ),
    # -- list_conflicts / get_conflict -----------------------------------------------------------------
    "list_conflicts/unknown-status": Row("list_conflicts", {"status": "all"}, "validation_failed: status:"),
    "list_conflicts/unknown-shape": Row("list_conflicts", {"shape": "triple"}, "validation_failed: shape:"),
    "list_conflicts/limit-as-string": Row("list_conflicts", {"limit": "5"}, "validation_failed: limit:"),
    "list_conflicts/limit-over-100": Row("list_conflicts", {"limit": 101}, "validation_failed: limit:"),
    "list_conflicts/verdict-wrong-type": Row("list_conflicts", {"verdict": 5}, "validation_failed: verdict:"),
    "list_conflicts/unknown-field": Row(
        "list_conflicts", {"owner": "bob"}, "validation_failed: owner: unknown argument"
    ),
    "list_conflicts/nul-in-cursor": Row("list_conflicts", {"cursor": NUL}, "validation_failed: cursor: contains a NUL"),
    "get_conflict/missing-id": Row("get_conflict", {"id": "@missing_dispute"}, "not_found: no dispute"),
    "get_conflict/oversized-id": Row("get_conflict", {"id": "dsp_" + "0" * 97}, "validation_failed: id:"),
    "get_conflict/no-id": Row("get_conflict", {}, "validation_failed: id: required"),
    "get_conflict/id-wrong-type": Row("get_conflict", {"id": None}, "validation_failed: id:"),
    "get_conflict/unknown-field": Row(
        "get_conflict", {"id": "@pending", "dispute_id": "@pending"}, "validation_failed: dispute_id: unknown argument"
    ),
    "get_conflict/nul-in-id": Row("get_conflict", {"id": f"@pending{NUL}"}, "validation_failed: id: contains a NUL"),
    # -- resolve_conflict ------------------------------------------------------------------------------
    "resolve_conflict/missing-id": Row(
        "resolve_conflict", {"dispute_id": "@missing_dispute", "keep_both": True}, "not_found: no dispute"
    ),
    "resolve_conflict/already-resolved": Row(
        "resolve_conflict", {"dispute_id": "@resolved", "keep_both": True}, "conflict: already_resolved:"
    ),
    "resolve_conflict/no-choice": Row("resolve_conflict", {"dispute_id": "@pending"}, "validation_failed:"),
    "resolve_conflict/accept-without-a-proposal": Row(
        "resolve_conflict", {"dispute_id": "@pending", "accept": True}, "validation_failed: accept:"
    ),
    "resolve_conflict/two-choices": Row(
        "resolve_conflict", {"dispute_id": "@pending", "keep_both": True, "winner": "@pending_a"}, "validation_failed:"
    ),
    "resolve_conflict/keep-both-false-is-no-choice": Row(
        "resolve_conflict", {"dispute_id": "@pending", "keep_both": False}, "validation_failed:"
    ),
    "resolve_conflict/winner-outside-the-pair": Row(
        "resolve_conflict", {"dispute_id": "@pending", "winner": "@fact"}, "validation_failed:"
    ),
    "resolve_conflict/retire-a-pair-row": Row(
        "resolve_conflict", {"dispute_id": "@pending", "retire": True}, "validation_failed:"
    ),
    "resolve_conflict/empty-merge": Row(
        "resolve_conflict", {"dispute_id": "@pending", "merge": " "}, "validation_failed: merge:"
    ),
    "resolve_conflict/oversized-merge": Row(
        "resolve_conflict", {"dispute_id": "@pending", "merge": OVERSIZED}, "validation_failed: merge:"
    ),
    "resolve_conflict/secret-in-merge": Row(
        "resolve_conflict",
        {"dispute_id": "@pending", "merge": f"use {GITHUB_TOKEN}"},
        "validation_failed: secret_content_rejected: merge",
    ),
    "resolve_conflict/keep-both-as-string": Row(
        "resolve_conflict", {"dispute_id": "@pending", "keep_both": "yes"}, "validation_failed: keep_both:"
    ),
    "resolve_conflict/no-dispute-id": Row(
        "resolve_conflict", {"keep_both": True}, "validation_failed: dispute_id: required"
    ),
    "resolve_conflict/unknown-field": Row(
        "resolve_conflict",
        {"dispute_id": "@pending", "keep_both": True, "note": "x"},
        "validation_failed: note: unknown argument",
    ),
    "resolve_conflict/surrogate-in-merge": Row(
        "resolve_conflict",
        {"dispute_id": "@pending", "merge": SURROGATE},
        "validation_failed: merge: is not valid Unicode",
    ),
    # -- resolve_conflicts -----------------------------------------------------------------------------
    "resolve_conflicts/neither": Row("resolve_conflicts", {}, "validation_failed:"),
    "resolve_conflicts/both": Row(
        "resolve_conflicts", {"policy": {"name": "keep_both"}, "resolutions": []}, "validation_failed:"
    ),
    "resolve_conflicts/101-resolutions": Row(
        "resolve_conflicts", {"resolutions": [{"dispute_id": "@pending"}] * 101}, "validation_failed: resolutions:"
    ),
    "resolve_conflicts/unknown-policy": Row(
        "resolve_conflicts", {"policy": {"name": "coin_flip"}}, "validation_failed: policy.name:"
    ),
    "resolve_conflicts/policy-as-string": Row(
        "resolve_conflicts", {"policy": "newest_wins"}, "validation_failed: policy:"
    ),
    "resolve_conflicts/resolutions-not-a-list": Row(
        "resolve_conflicts", {"resolutions": {"dispute_id": "@pending"}}, "validation_failed: resolutions:"
    ),
    "resolve_conflicts/item-without-id": Row(
        "resolve_conflicts",
        {"resolutions": [{"winner": "@pending_a"}]},
        "validation_failed: resolutions[0].dispute_id: required",
    ),
    "resolve_conflicts/unknown-field-in-an-item": Row(
        "resolve_conflicts",
        {"resolutions": [{"dispute_id": "@pending", "merge": "x"}]},
        "validation_failed: resolutions[0].merge: unknown argument",
    ),
    "resolve_conflicts/winner-wrong-type": Row(
        "resolve_conflicts",
        {"resolutions": [{"dispute_id": "@pending", "winner": 1}]},
        "validation_failed: resolutions[0].winner:",
    ),
    "resolve_conflicts/nul-in-an-id": Row(
        "resolve_conflicts",
        {"resolutions": [{"dispute_id": NUL}]},
        "validation_failed: resolutions[0].dispute_id: contains a NUL",
    ),
    # -- ingest_conversation ---------------------------------------------------------------------------
    "ingest_conversation/chunk-wrong-type": Row(
        "ingest_conversation", chunk(transcript_chunk=["user: hi"]), "validation_failed: transcript_chunk:"
    ),
    "ingest_conversation/missing-chunk": Row(
        "ingest_conversation", chunk(transcript_chunk=...), "validation_failed: transcript_chunk: required"
    ),
    "ingest_conversation/missing-conversation": Row(
        "ingest_conversation", chunk(conversation_id=...), "validation_failed: conversation_id: required"
    ),
    "ingest_conversation/unknown-field": Row(
        "ingest_conversation", chunk(speaker="user"), "validation_failed: speaker: unknown argument"
    ),
    "ingest_conversation/empty-chunk": Row(
        "ingest_conversation", chunk(transcript_chunk=" \n "), "validation_failed: transcript_chunk: must not be empty"
    ),
    "ingest_conversation/oversized-chunk": Row(
        "ingest_conversation",
        chunk(transcript_chunk="x" * 48_001),
        "validation_failed: transcript_chunk: 48001 characters is over the limit of 48000",
    ),
    "ingest_conversation/empty-conversation": Row(
        "ingest_conversation", chunk(conversation_id=""), "validation_failed: conversation_id:"
    ),
    "ingest_conversation/malformed-hash": Row(
        "ingest_conversation", chunk(chunk_hash="ABC"), "validation_failed: chunk_hash:"
    ),
    "ingest_conversation/secret-in-chunk": Row(
        "ingest_conversation",
        chunk(transcript_chunk=f"user: the token is {GITHUB_TOKEN}"),
        "validation_failed: secret_content_rejected: transcript_chunk github_token",
    ),
    "ingest_conversation/secret-in-conversation-id": Row(
        "ingest_conversation",
        chunk(conversation_id=f"aws {AWS_KEY_ID}"),
        "validation_failed: secret_content_rejected: conversation_id",
    ),
    "ingest_conversation/nul-in-chunk": Row(
        "ingest_conversation", chunk(transcript_chunk=f"a{NUL}b"), "validation_failed: transcript_chunk: contains a NUL"
    ),
    "ingest_conversation/no-extraction-model": Row(
        "ingest_conversation", chunk(), "unavailable: no extraction model is configured"
    ),
    # -- list_portability / resolve_portability --------------------------------------------------------
    "list_portability/unknown-status": Row("list_portability", {"status": "all"}, "validation_failed: status:"),
    "list_portability/status-wrong-type": Row("list_portability", {"status": 1}, "validation_failed: status:"),
    "list_portability/unknown-field": Row(
        "list_portability", {"owner": "bob"}, "validation_failed: owner: unknown argument"
    ),
    "resolve_portability/missing-id": Row(
        "resolve_portability",
        {"candidate_id": "@missing_candidate", "approve": True},
        "not_found: no portability candidate",
    ),
    "resolve_portability/already-dismissed": Row(
        "resolve_portability", {"candidate_id": "@dismissed", "approve": True}, "conflict: already_resolved:"
    ),
    "resolve_portability/memory-not-live": Row(
        "resolve_portability", {"candidate_id": "@candidate_forgotten", "approve": True}, "conflict:"
    ),
    "resolve_portability/approve-as-string": Row(
        "resolve_portability",
        {"candidate_id": "@candidate", "approve": "true"},
        "validation_failed: approve: Input should be a valid boolean",
    ),
    "resolve_portability/no-approve": Row(
        "resolve_portability", {"candidate_id": "@candidate"}, "validation_failed: approve: required"
    ),
    "resolve_portability/oversized-id": Row(
        "resolve_portability", {"candidate_id": "prt_" + "0" * 97, "approve": True}, "validation_failed: candidate_id:"
    ),
    "resolve_portability/unknown-field": Row(
        "resolve_portability",
        {"candidate_id": "@candidate", "approve": True, "scope": "core"},
        "validation_failed: scope: unknown argument",
    ),
    "resolve_portability/nul-in-id": Row(
        "resolve_portability",
        {"candidate_id": NUL, "approve": False},
        "validation_failed: candidate_id: contains a NUL",
    ),
}

# (tool, arguments naming another user's object, the same with a missing id in its place)
FOREIGN: dict[str, tuple[str, dict[str, Any]]] = {
    "get_memory": ("get_memory", {"id": "@bob_fact"}),
    "forget": ("forget", {"id": "@bob_fact"}),
    "restore_memory": ("restore_memory", {"id": "@bob_fact"}),
    "close_loop": ("close_loop", {"id": "@bob_fact"}),
    "link-src": ("link", {"src": "@bob_fact", "dst": "@fact", "type": "relates_to"}),
    "link-dst": ("link", {"src": "@fact", "dst": "@bob_fact", "type": "contradicts"}),
    "challenge": ("challenge", {"memory_id": "@bob_fact", "reason": "wrong"}),
    "get_conflict": ("get_conflict", {"id": "@bob_single"}),
    "resolve_conflict": ("resolve_conflict", {"dispute_id": "@bob_single", "retire": True}),
    "resolve_portability": ("resolve_portability", {"candidate_id": "@bob_candidate", "approve": True}),
}
# Tools that answer a batch: the foreign item must fail exactly as a missing one, and nothing else happens.
FOREIGN_IN_A_BATCH: dict[str, tuple[str, dict[str, Any], str]] = {
    "move_memories": ("move_memories", {"ids": ["@bob_fact"], "scope": "core"}, "failed"),
    "resolve_conflicts": (
        "resolve_conflicts",
        {"resolutions": [{"dispute_id": "@bob_single", "retire": True}]},
        "failed",
    ),
}
MISSING_TWIN = {
    "@bob_fact": "@missing_memory",
    "@bob_single": "@missing_dispute",
    "@bob_candidate": "@missing_candidate",
}


def resolve(value: Any, seed: Seed) -> Any:
    """``value`` with every ``@name`` (also ``@name<suffix>``) replaced by the seeded id of that name."""
    if isinstance(value, dict):
        return {k: resolve(v, seed) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, seed) for v in value]
    if isinstance(value, str) and value.startswith("@"):
        for name in sorted((f.name for f in fields(seed)), key=len, reverse=True):
            if value[1:].startswith(name):
                return getattr(seed, name) + value[1 + len(name) :]
        raise KeyError(value)
    return value


def twin(value: Any) -> Any:
    """The same arguments with each other-user reference replaced by a missing id of the same kind."""
    if isinstance(value, dict):
        return {k: twin(v) for k, v in value.items()}
    if isinstance(value, list):
        return [twin(v) for v in value]
    return MISSING_TWIN.get(value, value) if isinstance(value, str) else value


def has_surrogate(value: Any) -> bool:
    """Whether a lone surrogate hides anywhere in ``value`` (no UTF-8 encodes one)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def params(rows: dict[str, Any]) -> list[Any]:
    return [pytest.param(key, id=key) for key in rows]
