"""Anchoring a memory as it is written: the anchors its writer names, and those its words name.

Where the server can see the project's working tree (a stdio server or the CLI on the developer's machine,
where the project's path is a git repository), each anchor is located now: a named anchor that is not there
is refused, and the anchors found in the content are added as automatic. Every located anchor is stamped
with the repository's identity, the commit and the hash of its region, so the first verification has
something to compare with. Where the tree is out of sight (a team's server), named anchors are kept
unverified and the content is not searched: the first ``zm verify`` on a developer's machine stamps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path, PurePosixPath

from zero_memory import errors, transitions
from zero_memory.access.projects import looks_like_path, normalize_path
from zero_memory.domain.anchors import (
    MAX_ANCHORS,
    Anchor,
    AnchorRecord,
    AnchorState,
    Origin,
    region_hash,
)
from zero_memory.memory.models import AnchorSpec, AnchorView
from zero_memory.store.base import Tx
from zero_memory.workspace import symbols
from zero_memory.workspace.git import Repository
from zero_memory.workspace.mentions import anchors_in


def view(record: AnchorRecord) -> AnchorView:
    return AnchorView(
        path=record.path,
        symbol=record.symbol,
        origin=record.origin.value,
        state=record.state.value,
        commit=record.commit,
        drift=record.drift,
    )


def code_changed(records: Sequence[AnchorRecord]) -> str | None:
    """The commit range over which a memory's code changed since it was verified, or None while it holds."""
    drifts = [r.drift or "changed" for r in records if r.state in (AnchorState.CHANGED, AnchorState.GONE)]
    return drifts[0] if drifts else None


def named(specs: Sequence[AnchorSpec]) -> list[Anchor]:
    """The writer's anchors, checked: relative paths inside the repository, at most ``MAX_ANCHORS``."""
    if len(specs) > MAX_ANCHORS:
        raise errors.validation(f"anchors: at most {MAX_ANCHORS} a memory")
    anchors: list[Anchor] = []
    for spec in specs:
        path = spec.path.strip().replace("\\", "/").removeprefix("./")
        parts = PurePosixPath(path).parts
        if not parts or path.startswith("/") or ".." in parts:
            raise errors.validation(f"anchors: {spec.path!r} must be a path relative to the repository's root")
        symbol = (spec.symbol or "").strip() or None
        anchor = Anchor(path, symbol)
        if anchor not in anchors:
            anchors.append(anchor)
    return anchors


def repository_of(tx: Tx, scope: str, anchors: Sequence[Anchor], hint: str | None = None) -> Repository | None:
    """The working tree of the project ``scope`` names, where this process can see it: the project's recorded
    path, else the directory the write's hint names (a project this very write creates has no row yet, and a
    project made by name records no path). Anchors named for a memory outside any project are refused: there
    is no repository for them to point into."""
    if not scope.startswith(("proj.", "team.")):
        if anchors:
            raise errors.validation(f"anchors: {scope} is not a project; anchors point into a project's repository")
        return None
    project = tx.get_project(scope)
    path = project.path if project is not None and project.path else None
    if path is None and hint and looks_like_path(hint):
        path = normalize_path(hint)
    directory = Path(path) if path else None
    return Repository.at(directory) if directory and directory.is_dir() else None


def locate(repository: Repository | None, anchors: Sequence[Anchor], content: str, at: datetime) -> list[AnchorRecord]:
    """Records for the named anchors and, with a working tree in sight, those the content names."""
    if repository is None:
        return [
            AnchorRecord("", a.path, a.symbol, Origin.EXPLICIT, AnchorState.UNVERIFIED, None, None, None, None)
            for a in anchors
        ]
    found = [a for a in anchors_in(content, repository) if a not in anchors]
    if not anchors and not found:
        return []
    identity, head = repository.identity(), repository.head()
    records: list[AnchorRecord] = []
    for anchor, origin in [*((a, Origin.EXPLICIT) for a in anchors), *((a, Origin.AUTOMATIC) for a in found)]:
        text = _region(repository, anchor)
        if text is None:
            raise errors.validation(f"anchors: {anchor.label} is not in the repository at {repository.root}")
        records.append(
            AnchorRecord(
                "", anchor.path, anchor.symbol, origin, AnchorState.VERIFIED, identity, head, region_hash(text), at
            )
        )
    return records[:MAX_ANCHORS]


def _region(repository: Repository, anchor: Anchor) -> str | None:
    source = repository.read(anchor.path)
    if source is None or anchor.symbol is None:
        return source
    region = symbols.find(anchor.path, source, anchor.symbol)
    return region.text if region else None


def accept_current(tx: Tx, memory_id: str, *, actor: str, owner: str, at: datetime) -> list[str]:
    """A person upheld the memory over its ``outdated`` row: it still holds for the code as it is now. Each
    changed anchor is re-anchored to the code verification found (its place and hash), and an anchor whose
    code is gone is let go; one audit row keeps what each was before. The labels of what changed."""
    changed: list[str] = []
    before: list[dict[str, object]] = []
    kept: list[AnchorRecord] = []
    for record in tx.anchors_of([memory_id]).get(memory_id, []):
        if record.state is AnchorState.GONE:
            before.append({"anchor": record.anchor.label, "state": "gone", "commit": record.commit})
            changed.append(record.anchor.label)
            continue
        if record.state is AnchorState.CHANGED and record.observed is not None:
            commit = (record.drift or "").rpartition("..")[2] or record.commit
            before.append({"anchor": record.anchor.label, "hash": record.content_hash, "commit": record.commit})
            record = replace(
                record,
                path=record.observed.path,
                symbol=record.observed.symbol,
                state=AnchorState.VERIFIED,
                content_hash=record.observed_hash,
                commit=commit,
                verified_at=at,
                drift=None,
                observed=None,
                observed_hash=None,
            )
            changed.append(record.anchor.label)
        kept.append(record)
    if changed:
        transitions.accept_anchors(tx, memory_id, kept, before, owner=owner, actor=actor, at=at)
    return changed


ANCHOR_ACTIONS = ("anchor.move", "anchor.accept")
"""The audit actions of a verification that moved an anchor: ``zm hygiene undo`` puts each back."""


def moved_payload(before: AnchorRecord, after: AnchorRecord) -> dict[str, object]:
    """What an ``anchor.move``/``anchor.accept`` audit row keeps: enough to put the anchor back."""
    return {
        "from": before.anchor.label,
        "to": after.anchor.label,
        "from_path": before.path,
        "from_symbol": before.symbol,
        "to_path": after.path,
        "to_symbol": after.symbol,
        "hash": before.content_hash,
        "commit": before.commit,
    }


def put_back(tx: Tx, memory_id: str, payload: Mapping[str, object], at: datetime) -> bool:
    """Undo one recorded move: the anchor at its new place goes back to the old one, with the hash and commit
    it had there. False when it has since moved on (someone or something else changed it)."""
    to_path, to_symbol = payload.get("to_path"), payload.get("to_symbol") or None
    for record in tx.anchors_of([memory_id]).get(memory_id, []):
        if (record.path, record.symbol) != (to_path, to_symbol):
            continue
        back = replace(
            record,
            path=str(payload["from_path"]),
            symbol=str(payload["from_symbol"]) if payload.get("from_symbol") else None,
            content_hash=str(payload["hash"]) if payload.get("hash") else None,
            commit=str(payload["commit"]) if payload.get("commit") else None,
            verified_at=at,
        )
        return tx.update_anchor(record, back)
    return False
