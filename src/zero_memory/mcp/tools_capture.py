"""The capture tool: ingest_conversation."""

from __future__ import annotations

from pydantic import Field

from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import HASH_PATTERN, IngestRequest, IngestResult
from zero_memory.mcp.tooling import ToolArgs, ToolCall, Toolset
from zero_memory.settings import CaptureConfig

toolset = Toolset()
MAX_CHUNK = CaptureConfig().max_chunk_chars


class IngestArgs(ToolArgs):
    transcript_chunk: str = Field(
        description="A part of a conversation as plain text: the user's and the assistant's words, in order "
        f"(leave tool output out). At most {MAX_CHUNK:,} characters; send longer conversations in several chunks."
    )
    conversation_id: str = Field(
        min_length=1,
        max_length=500,
        description="The conversation (session) the chunk comes from; chunks of one conversation share it.",
    )
    chunk_hash: str | None = Field(
        default=None,
        pattern=HASH_PATTERN,
        description="The SHA-256 of transcript_chunk's UTF-8 bytes in lowercase hex, to check the chunk arrived "
        "whole. Default: computed here.",
    )
    client: str | None = Field(
        default=None, max_length=100, description="The client the conversation ran in. Default: this connection's."
    )
    project_hint: str | None = Field(
        default=None,
        description="The project the conversation is about: a repository path, a git remote or a project name. "
        "Default: the project the conversation's session is attached to.",
    )


@toolset.tool(title="Ingest a conversation chunk", idempotent=True)
def ingest_conversation(call: ToolCall, args: IngestArgs) -> IngestResult:
    """Hand the server a part of a conversation to extract memories from, automatically. For transcript
    watchers and client hooks; an agent states what it learns with `remember` instead.

    The answer comes at once (`status: accepted`); a model then extracts the self-contained statements worth
    keeping in the background, and each is written as a provisional memory (rank 0) in the project: it yields
    to an authoritative memory that says the same, and hygiene ranks it below what agents and people state.
    The same chunk again changes nothing (`status: duplicate`); a chunk whose extraction was given up is put
    back in line (`requeued`). `extraction` tells where the chunk is: pending, extracting, done or failed.

    Refusals: a chunk holding a credential is refused whole and never stored or sent to a model
    (`validation_failed: secret_content_rejected:`); `unavailable: budget_exhausted:` when the owner's daily
    extraction allowance is spent (everything else keeps working); `scope_target_required:` when neither
    `project_hint` nor the session names a project.
    """
    return ingest(
        call.app,
        call.caller,
        IngestRequest(
            transcript_chunk=args.transcript_chunk,
            conversation_id=args.conversation_id,
            chunk_hash=args.chunk_hash,
            client=args.client,
            project_hint=args.project_hint,
        ),
    )
