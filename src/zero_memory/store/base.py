"""The store port.

Services reach data only through a ``Tx`` taken from ``Store.tx()``; nothing
outside ``store/`` writes SQL. Reads of memories take a ``Visibility`` (the
caller's scopes) or ``SYSTEM`` (a named system pass acting on an owner's
memories): there is no unfiltered default.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

import numpy as np

from zero_memory.domain.memory import Brief, InvalidationReason, Memory, Status
from zero_memory.domain.oauth import OAuthClient, OAuthCode, OAuthGrant, OAuthToken
from zero_memory.domain.records import (
    AuditEntry,
    Channel,
    ChunkStatus,
    Dispute,
    DisputeStatus,
    Link,
    Membership,
    Project,
    Run,
    RunStatus,
    User,
    Visibility,
)
from zero_memory.store.anchor_port import AnchorTx
from zero_memory.store.fulltext import TextPlan

T = TypeVar("T")


class System:
    """The reader of a system pass: sees every memory, named explicitly."""

    def __repr__(self) -> str:
        return "SYSTEM"


SYSTEM = System()
Reader = Visibility | System


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory: Memory
    similarity: float


@dataclass(frozen=True, slots=True)
class BriefNeighbour:
    brief: Brief
    similarity: float


class VectorSearch(Protocol):
    """``Tx.similar`` as briefs, made together with other reads of the transaction (recall's full text): a
    store whose index is searched in this process runs them on another thread while it searches (the
    threads are the store's business, not the caller's); one that searches in SQL runs them first."""

    def run(self, vector: np.ndarray, beside: Callable[[], T]) -> tuple[list[BriefNeighbour], T]:
        """What ``similar`` finds for ``vector``, as briefs (the candidates that pass the filters as the
        transaction sees them, scored exactly), and what ``beside`` returns. ``beside`` may read the
        transaction, and is the only one to while it runs."""
        ...


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: str
    confidence: float
    rationale: str
    model: str


@dataclass(frozen=True, slots=True)
class PortabilityCandidate:
    id: str
    memory_id: str
    owner: str
    status: str
    original_scope: str
    created_at: datetime
    confidence: float | None = None
    rationale: str | None = None
    model: str | None = None
    run_id: str | None = None
    resolved_at: datetime | None = None
    resolved_by: str | None = None


@dataclass(frozen=True, slots=True)
class CaptureChunk:
    """A transcript chunk staged for extraction (``capture_chunks``); ``transcript`` is None once it is not needed."""

    id: str
    owner: str
    chunk_hash: str
    conversation_id: str
    client: str
    scope: str
    transcript: str | None
    chars: int
    status: ChunkStatus
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    attempts: int = 0
    lease_until: datetime | None = None
    last_error: str | None = None
    statements: int = 0
    created: int = 0
    yielded: int = 0
    absorbed: int = 0
    refused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class DisputeQuery:
    owner: str | None = None
    scopes: frozenset[str] | None = None
    status: DisputeStatus | None = DisputeStatus.PENDING
    verdict: str | None = None
    shape: str | None = None
    origin: str | None = None
    limit: int = 50
    after: str | None = None


class Tx(AnchorTx, Protocol):
    def serialize(self, key: str) -> None:
        """Serialize this write transaction with every other one naming the same key."""
        ...

    # who the transaction acts for (PostgreSQL's row-level security; nothing to enforce on SQLite)
    def act_as(self, uid: str) -> None:
        """Act for one user: on PostgreSQL, rows that user may not see are then invisible to this transaction.

        ``access.visibility`` calls it; a transaction acts for one user only.
        """
        ...

    def act_as_system(self, name: str) -> None:
        """Act as the named system pass (hygiene, an operator command): every user's rows are visible."""
        ...

    # users, tokens, keys
    def add_user(self, user: User) -> None: ...
    def get_user(self, uid: str) -> User | None: ...
    def list_users(self) -> list[User]: ...
    def add_token(self, token_id: str, user_id: str, token_hash: str, at: datetime) -> None: ...
    def get_token(self, token_id: str) -> tuple[str, str] | None: ...
    def revoke_tokens(self, user_id: str, at: datetime) -> int: ...
    def set_provider_key(self, user_id: str, provider: str, ciphertext: str, at: datetime) -> None: ...
    def get_provider_key(self, user_id: str, provider: str) -> str | None: ...
    def delete_provider_key(self, user_id: str, provider: str) -> bool:
        """Forget a stored provider key; False when there was none."""
        ...

    # OAuth clients, grants, codes and tokens (digests only; see domain/oauth.py)
    def add_oauth_client(self, client: OAuthClient) -> None: ...
    def get_oauth_client(self, client_id: str) -> OAuthClient | None: ...
    def add_oauth_grant(self, grant: OAuthGrant) -> None: ...
    def get_oauth_grant(self, grant_id: str) -> OAuthGrant | None: ...
    def oauth_grants_of(self, user_id: str, *, live_only: bool = True) -> list[OAuthGrant]: ...
    def touch_oauth_grant(self, grant_id: str, at: datetime) -> None: ...
    def revoke_oauth_grant(self, grant_id: str, at: datetime) -> bool:
        """Revoke a grant and every token issued under it; False when it was revoked already."""
        ...

    def add_oauth_code(self, code: OAuthCode) -> None: ...
    def get_oauth_code(self, code_hash: str) -> OAuthCode | None: ...
    def use_oauth_code(self, code_hash: str, at: datetime) -> bool:
        """Mark a code used; False when it was used already."""
        ...

    def add_oauth_token(self, token: OAuthToken) -> None: ...
    def get_oauth_token(self, token_id: str) -> OAuthToken | None: ...
    def use_oauth_token(self, token_id: str, at: datetime) -> bool:
        """Mark a refresh token rotated; False when it was rotated already."""
        ...

    def revoke_oauth_token(self, token_id: str, at: datetime) -> bool: ...
    def oauth_tokens_of_grant(self, grant_id: str) -> list[OAuthToken]: ...
    def delete_oauth_of_user(self, user_id: str) -> int:
        """Remove a user's grants with their codes and tokens (account deletion); the number of grants."""
        ...

    # projects, membership, sessions
    def add_project(self, project: Project) -> None: ...
    def get_project(self, scope: str) -> Project | None: ...
    def find_projects(
        self, *, path: str | None = None, remote: str | None = None, slug: str | None = None
    ) -> list[Project]: ...
    def list_projects(self, scopes: Collection[str] | None = None) -> list[Project]: ...
    def set_membership(self, scope: str, user_id: str, role: str, at: datetime) -> None: ...
    def memberships(self, user_id: str) -> list[Membership]: ...
    def members_of(self, scope: str) -> list[Membership]:
        """Everyone with a role on a project or team scope (on PostgreSQL, a user's transaction sees only
        their own row: ask as a system pass)."""
        ...

    def get_session(self, owner: str, session_id: str) -> str | None: ...
    def attach_session(self, owner: str, session_id: str, scope: str, at: datetime) -> str: ...

    # memories
    def insert_memory(self, memory: Memory, vector: np.ndarray, model: str) -> None: ...
    def insert_memories(self, memories: Sequence[tuple[Memory, np.ndarray]], model: str) -> None:
        """Insert several new memories at once (a bulk import's batch)."""
        ...

    def get_memory(self, memory_id: str, reader: Reader) -> Memory | None: ...
    def get_memories(self, ids: Collection[str], reader: Reader) -> dict[str, Memory]: ...
    def briefs_with_vectors(self, ids: Collection[str], reader: Reader) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """The briefs of ``get_memories`` with each memory's vector (None if it has none), in one statement."""
        ...

    def find_live_by_hash(self, owner: str, scope: str, content_hash: str) -> Memory | None: ...
    def find_by_hash(self, owner: str, content_hash: str) -> list[Memory]: ...
    def stored_hashes(self, owner: str, content_hashes: Collection[str]) -> set[str]:
        """Which of these content hashes the owner's memories already have, in any state."""
        ...

    def set_status(
        self,
        memory_id: str,
        status: Status,
        reason: InvalidationReason | None,
        superseded_by: str | None,
        at: datetime,
    ) -> None: ...
    def set_scope(self, memory_id: str, scope: str, original_scope: str | None, at: datetime) -> None: ...
    def mark_restored(self, memory_id: str, at: datetime) -> None: ...
    def similar(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None = None,
        owner: str | None = None,
        exclude: Collection[str] = (),
        kinds: Collection[str] | None = None,
    ) -> list[Neighbour]: ...
    def vector_search(
        self, *, floor: float, limit: int, scopes: Collection[str] | None = None, kinds: Collection[str] | None = None
    ) -> VectorSearch:
        """``similar`` over a vector not known yet: the search is prepared in the transaction (the index
        caught up with it), its vector proposed later, possibly from another thread."""
        ...

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]: ...
    def text_plan(self, query: str) -> TextPlan:
        """The query's words weighed over this store, and the rarest of them (store/fulltext.py)."""
        ...

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        """Up to ``limit`` live memories of ``scopes`` holding a matched word of the plan, by the weight of
        those words, then newest first."""
        ...

    def text_briefs(
        self, plan: TextPlan, *, scopes: Collection[str], limit: int, reader: Reader
    ) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """``briefs_with_vectors`` of the ``text_candidates``: what recall reads of its full-text side."""
        ...

    def fulltext(self, query: str, *, scopes: Collection[str], limit: int) -> list[str]:
        """Full text alone: the candidates of the query's plan, ranked by ``TextPlan.score``."""
        ...

    def memory_vector(self, memory_id: str) -> np.ndarray | None: ...
    def memory_vectors(self, memory_ids: Collection[str]) -> dict[str, np.ndarray]: ...
    def update_embedding(self, memory_id: str, vector: np.ndarray, model: str) -> None: ...
    def live_memories(
        self,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        after: tuple[datetime, str] | None = None,
        kinds: Collection[str] | None = None,
        scope_prefix: str | None = None,
        scopes: Collection[str] | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> list[Memory]:
        """Live memories, oldest first (``newest_first`` reverses); ``scopes`` limits them to those scopes."""
        ...

    def closed_loops(self, scopes: Collection[str], *, limit: int) -> list[Memory]:
        """Open loops closed (reason ``closed``) in these scopes, most recently closed first."""
        ...

    def iter_memories(self, *, batch: int = 500) -> Iterator[Memory]: ...
    def count_memories(self, *, owner: str | None = None, status: Status | None = None) -> int: ...
    def embedding_models(self) -> dict[str, int]: ...
    def texts_to_embed(self, *, unless_model: str | None, after: str, limit: int) -> list[tuple[str, str]]: ...

    # pins: standing rules a person marked
    def add_pin(self, memory_id: str, by: str, at: datetime) -> bool:
        """Pin a memory; False when it was pinned already."""
        ...

    def remove_pin(self, memory_id: str) -> bool:
        """Unpin a memory; False when it was not pinned."""
        ...

    def pinned(self, memory_ids: Collection[str]) -> set[str]: ...
    def pinned_in(self, scopes: Collection[str]) -> list[Memory]:
        """The live pinned memories of these scopes, in the order they were pinned."""
        ...

    # links
    def add_link(self, link: Link) -> None: ...
    def links_of(self, memory_id: str) -> list[Link]: ...
    def has_link(self, a: str, b: str, link_type: str) -> bool: ...
    def remove_links(self, *, dst: str, link_type: str, at: datetime) -> list[Link]: ...
    def links_of_run(self, run_id: str) -> list[Link]: ...
    def remove_link(self, link_id: str, at: datetime) -> None: ...

    # audit
    def add_audit(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        memory_ids: Sequence[str],
        payload: dict[str, Any],
        run_id: str | None,
        at: datetime,
    ) -> int: ...
    def add_memory_audits(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        payloads: Sequence[tuple[str, dict[str, Any]]],
        run_id: str | None,
        at: datetime,
    ) -> None:
        """One audit row per (memory id, payload), as ``add_audit`` would write each (a bulk import's batch)."""
        ...

    def audit_for_memory(
        self,
        memory_id: str,
        *,
        limit: int = 200,
        before: int | None = None,
        actions: Collection[str] | None = None,
    ) -> list[AuditEntry]:
        """A memory's audit rows, newest first: at most ``limit``, older than the row numbered ``before``,
        only of ``actions`` when given (a long-lived memory's recent trail is what a reader needs)."""
        ...

    def audit_for_run(self, run_id: str) -> list[AuditEntry]: ...
    def audit_actions(self, action: str, *, since: datetime | None = None) -> list[AuditEntry]: ...
    def last_action_at(self, memory_ids: Sequence[str], action: str) -> dict[str, datetime]: ...

    # review queue
    def add_dispute(self, dispute: Dispute) -> bool: ...
    def get_dispute(self, dispute_id: str) -> Dispute | None: ...
    def dispute_for_pair(self, pair_key: str) -> Dispute | None: ...
    def list_disputes(self, query: DisputeQuery) -> list[Dispute]: ...
    def count_disputes(self, query: DisputeQuery) -> int: ...
    def open_disputes_for(self, memory_ids: Collection[str]) -> list[Dispute]: ...
    def settle_dispute(
        self, dispute_id: str, status: DisputeStatus, resolution: dict[str, Any], by: str, at: datetime
    ) -> bool: ...

    def escalate_dispute(self, dispute_id: str, from_verdict: str, to_verdict: str, run_id: str | None) -> bool:
        """Give a pending row of ``from_verdict`` another verdict, in place, and the run that did it; False when
        it is no longer pending with that verdict."""
        ...

    # judgement cache
    def get_judgement(self, pair_key: str, model: str) -> Judgement | None: ...
    def judgements_of(self, pair_key: str) -> list[Judgement]: ...
    def put_judgement(self, pair_key: str, judgement: Judgement, at: datetime) -> None: ...

    # runs
    def claim_run(self, run: Run) -> bool: ...
    def touch_run(self, run_id: str, summary: dict[str, Any], at: datetime) -> None: ...
    def interrupt_runs(self, *, heartbeat_before: datetime, at: datetime) -> list[str]: ...
    def finish_run(self, run_id: str, status: RunStatus, summary: dict[str, Any], at: datetime) -> None: ...
    def get_run(self, run_id: str) -> Run | None: ...
    def list_runs(
        self,
        *,
        owner: str | None = None,
        limit: int = 50,
        kinds: Collection[str] | None = None,
        not_kinds: Collection[str] | None = None,
    ) -> list[Run]:
        """Runs newest first; ``kinds`` keeps those kinds of run, ``not_kinds`` leaves those out."""
        ...

    def runs_with_status(self, status: RunStatus) -> list[Run]: ...

    # re-examination guards and portability candidacies
    def guarded(self, memory_ids: Collection[str], model: str) -> set[str]: ...
    def add_guard(self, memory_id: str, model: str, outcome: str, at: datetime) -> None: ...
    def add_portability(self, candidate: PortabilityCandidate) -> bool: ...
    def get_portability(self, candidate_id: str) -> PortabilityCandidate | None: ...
    def portability_of(self, memory_ids: Collection[str]) -> set[str]: ...
    def list_portability(self, *, owner: str, status: str | None, limit: int = 100) -> list[PortabilityCandidate]: ...
    def settle_portability(self, candidate_id: str, status: str, by: str, at: datetime) -> bool: ...

    # usage
    def add_ledger(
        self,
        *,
        owner: str,
        model: str,
        purpose: str,
        input_tokens: int,
        output_tokens: int,
        latency_ms: int,
        outcome: str,
        run_id: str | None,
        at: datetime,
    ) -> None: ...
    def ledger(self, *, owner: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]: ...
    def add_usage_event(
        self, *, user_id: str, tool: str, client: str, outcome: str, declared_supersede: bool, at: datetime
    ) -> None: ...
    def usage_events(self, *, tool: str | None = None, since: datetime | None = None) -> list[dict[str, Any]]: ...
    def add_surfacings(
        self, user_id: str, memory_ids: Sequence[str], at: datetime, *, session_id: str | None, channel: Channel
    ) -> None: ...
    def surfacing_counts(self, *, since: datetime, min_count: int) -> list[tuple[str, int]]:
        """Memories surfaced at least ``min_count`` times since a moment, on any channel, most first."""
        ...

    def surfacings_of(self, memory_ids: Collection[str], *, since: datetime) -> dict[str, int]:
        """How often each memory was surfaced since a moment, on any channel."""
        ...

    def sessions_served(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> dict[str, int]:
        """In how many distinct sessions, of every user, each memory was surfaced on ``channel`` since a moment.

        Surfacings without a session are not counted: they cannot be told apart. Only memories the
        transaction's caller can read are counted (on SQLite, every stored one; the ids recall asks about).
        """
        ...

    # the capture stream: staged chunks and daily allowances
    def add_chunk(self, chunk: CaptureChunk) -> bool:
        """Stage a chunk; False when the owner staged one with the same hash before."""
        ...

    def get_chunk(self, chunk_id: str) -> CaptureChunk | None: ...
    def chunk_by_hash(self, owner: str, chunk_hash: str) -> CaptureChunk | None: ...
    def rearm_chunk(self, chunk_id: str, transcript: str, scope: str, at: datetime) -> bool:
        """Put a given-up chunk back in line with its text; False unless it was given up."""
        ...

    def claim_chunk(self, chunk_id: str, *, at: datetime, lease_until: datetime) -> CaptureChunk | None:
        """Take a due chunk (pending and due, or extracting with an expired lease) for one extraction."""
        ...

    def due_chunks(self, *, at: datetime, owner: str | None = None, limit: int = 50) -> list[str]: ...
    def count_waiting_chunks(self, owner: str) -> int: ...
    def owners_put_off(self, *, at: datetime, reason: str, owner: str | None = None) -> list[str]:
        """Owners of pending chunks not due until after ``at`` whose last error starts with ``reason``."""
        ...

    def bring_forward(self, owner: str, *, at: datetime, reason: str) -> int:
        """Make those chunks of ``owner`` due at ``at``; how many."""
        ...

    def update_chunk(self, chunk_id: str, at: datetime, **fields: Any) -> None:
        """Set the given columns (status, attempts, counts, tokens, errors, …) of a chunk."""
        ...

    def list_chunks(
        self, *, owner: str, since: datetime | None = None, status: ChunkStatus | None = None, limit: int = 100
    ) -> list[CaptureChunk]: ...
    def get_capture_budget(self, user_id: str) -> int | None: ...
    def set_capture_budget(self, user_id: str, daily_tokens: int, at: datetime) -> None: ...
    def clear_capture_budget(self, user_id: str) -> bool: ...
    def ledger_tokens(self, *, owner: str, purpose: str, since: datetime) -> int:
        """Input plus output tokens of the owner's ledger rows of one purpose since ``since``."""
        ...

    # retention (hygiene/retention.py): old rows become per-day counts
    def rollup_surfacings(self, *, before: datetime) -> int: ...
    def rollup_usage_events(self, *, before: datetime) -> int: ...
    def usage_by_day(
        self, *, since: datetime, tool: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Usage events per day (kept and rolled up): day, user_id, tool, client, outcome, declared_supersede, count."""
        ...

    def surfacings_by_day(self, *, since: datetime, user_id: str | None = None) -> list[dict[str, Any]]:
        """Surfacings per day and channel (kept and rolled up): day, user_id, channel, count."""
        ...

    # account deletion (memory/erasure.py): the one operation that removes rows
    def erase_user(self, uid: str, pseudonym: str, at: datetime) -> dict[str, int]:
        """Remove a user and their rows; memories they wrote to a scope another member reads stay, under
        ``pseudonym`` (store/queries/erasure.py). Rows removed per table, and ``kept_memories``, ``kept_projects``."""
        ...

    # whole-table copies (zm db copy): ``table`` is one of sql.COPY_TABLES, nothing else
    def copy_rows(self, table: str, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Whole rows in key order after the key ``after``; ``embedding`` as a float32 array."""
        ...

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows as ``copy_rows`` gives them, keeping every value (ids, ``seq``, timestamps)."""
        ...

    def count_rows(self, table: str) -> int: ...
    def restart_sequences(self) -> None:
        """After ``insert_rows``, let generated ``seq`` values continue after the largest one."""
        ...


class Store(Protocol):
    """A database. ``tx(write=True)`` serializes writers; reads see committed data."""

    backend: str
    dim: int

    def tx(self, *, write: bool = False) -> AbstractContextManager[Tx]: ...
    def advisory_lock(self, name: str) -> AbstractContextManager[bool]: ...
    def migrate(self) -> list[str]: ...
    def bulk_load(self, rows: int) -> AbstractContextManager[None]:
        """Around a load of about ``rows`` new memories in many transactions (an import, a copy): a store
        whose search index is cheaper to build once than to maintain row by row builds it after the load."""
        ...

    def wait_for_index(self) -> None:
        """Return once vector search uses the store's index rather than a scan of the rows: the SQLite
        store builds large clusters on a thread while searches scan (a benchmark timing the index, or a
        step preparing a store, waits for them); PostgreSQL's index is always the table's."""
        ...

    def purge_removed(self) -> None:
        """After ``Tx.erase_user``: remove what still holds the removed rows beside the tables (the SQLite
        vector index's snapshots and write-ahead log, PostgreSQL's dead row versions)."""
        ...

    def close(self) -> None: ...
