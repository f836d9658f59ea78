"""The tool layer: one way to declare an MCP tool, one way to run it.

A tool module is ``zero_memory.mcp.tools_<topic>``. It declares a ``Toolset``
and decorates thin functions; the server finds the module by its name::

    toolset = Toolset()

    class ChallengeArgs(ToolArgs):
        memory_id: str = Field(description="The id of the memory you doubt.")
        reason: str = Field(description="Why, in one sentence.")

    @toolset.tool(title="Challenge a memory", idempotent=True)
    def challenge(call: ToolCall, args: ChallengeArgs) -> ChallengeResult:
        \"\"\"What the tool is for, when to call it, what the answer means.\"\"\"
        return disputes.challenge(call.app, call.caller, args.memory_id, args.reason)

The docstring is the description the agent reads; the argument model is the
input schema (unknown arguments and wrong JSON types are refused); the return
annotation is the output schema. ``invoke`` does the rest for every tool, in
one place: strict argument validation, the caller from the transport, the
call off the event loop, the structured result with a short text mirror and
resource links, error translation, and the usage event.
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar, cast, get_type_hints

import anyio
import anyio.to_thread
import pydantic_core
from mcp.types import CallToolResult, ContentBlock, ResourceLink, TextContent, ToolAnnotations
from mcp.types import Tool as ToolDescription
from pydantic import BaseModel, ConfigDict, ValidationError

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.memory import guard
from zero_memory.memory.targets import attach_workspace, is_attached
from zero_memory.memory.validation import invalid_input, location
from zero_memory.telemetry import UsageEvent

log = logging.getLogger("zero_memory.mcp")

A = TypeVar("A", bound="ToolArgs")
R = TypeVar("R", bound=BaseModel)


class ToolArgs(BaseModel):
    """The arguments of one tool, validated as JSON: exact types, no unknown names.

    ``"7"`` is not an integer and a misspelt argument is not silently dropped:
    an agent that gets either wrong is told which field, and can fix the call.
    """

    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What a tool body gets besides its arguments: the app and the caller.

    ``caller.session_id`` is the transport session (the ``mcp-session-id`` of
    HTTP, one id per ``zm mcp`` process on stdio), or None where the protocol
    has none; ``caller.client`` is the client's name from the handshake.
    """

    app: App
    caller: Caller

    def session(self, explicit: str | None) -> str | None:
        """The session a call belongs to: the client's own id when it passes one, else the transport's."""
        return explicit or self.caller.session_id


Mirror = Callable[[Any], str]
Links = Callable[[Any], Sequence[ResourceLink]]


def json_mirror(result: BaseModel) -> str:
    return result.model_dump_json(exclude_none=True)


@dataclass(frozen=True)
class ToolSpec(Generic[A, R]):
    """One tool: its description for clients and the function that serves it."""

    name: str
    title: str
    description: str
    args: type[A]
    result: type[R]
    fn: Callable[[ToolCall, A], R] | Callable[[ToolCall, A], Awaitable[R]]
    annotations: ToolAnnotations
    mirror: Mirror = json_mirror
    links: Links | None = None
    declares_supersede: Callable[[A], bool] | None = None
    output_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_schema", self.result.model_json_schema(mode="serialization"))

    def describe(self) -> ToolDescription:
        return ToolDescription(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.args.model_json_schema(),
            output_schema=self.output_schema,
            annotations=self.annotations,
        )

    def parse(self, arguments: dict[str, Any]) -> A:
        unstorable = unstorable_text(arguments)
        if unstorable is not None:
            raise unstorable
        try:
            raw = pydantic_core.to_json(arguments)
        except pydantic_core.PydanticSerializationError:
            raise errors.validation("arguments: must be a JSON object") from None
        try:
            return self.args.model_validate_json(raw)
        except ValidationError as error:
            raise invalid_input(error) from None

    async def run(self, call: ToolCall, args: A) -> R:
        """The tool body: a coroutine on the loop, anything else on a worker thread."""
        if inspect.iscoroutinefunction(self.fn):
            return cast(R, await self.fn(call, args))
        return cast(R, await anyio.to_thread.run_sync(partial(self.fn, call, args)))

    def render(self, result: R) -> CallToolResult:
        content: list[ContentBlock] = [TextContent(type="text", text=self.mirror(result))]
        if self.links is not None:
            content.extend(self.links(result))
        return CallToolResult(content=content, structured_content=result.model_dump(mode="json"))


class Toolset:
    """The tools of one module, in declaration order."""

    def __init__(self) -> None:
        self.specs: list[ToolSpec[Any, Any]] = []

    def tool(
        self,
        *,
        title: str,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        mirror: Mirror | None = None,
        links: Links | None = None,
        declares_supersede: Callable[[Any], bool] | None = None,
        name: str | None = None,
    ) -> Callable[[Callable[[ToolCall, A], R]], Callable[[ToolCall, A], R]]:
        """Declare a tool. The hints tell clients what a call may do before they make it.

        ``read_only``: changes nothing the user cares about (clients may call it
        without asking). ``destructive``: may take something away, even
        reversibly (clients may ask first); spelt out as False otherwise,
        because the protocol's default is True. ``idempotent``: repeating the
        same call changes nothing more. No tool here reaches outside the server,
        so ``openWorldHint`` is always False.
        """

        def decorator(fn: Callable[[ToolCall, A], R]) -> Callable[[ToolCall, A], R]:
            hints = get_type_hints(fn)
            params = list(inspect.signature(fn).parameters)
            if len(params) != 2:
                raise TypeError(f"tool {fn.__name__}: takes (call: ToolCall, args: <ToolArgs model>)")
            args_model, result_model = hints.get(params[1]), hints.get("return")
            if not (isinstance(args_model, type) and issubclass(args_model, ToolArgs)):
                raise TypeError(f"tool {fn.__name__}: its second parameter must be annotated with a ToolArgs model")
            if not (isinstance(result_model, type) and issubclass(result_model, BaseModel)):
                raise TypeError(f"tool {fn.__name__}: its return annotation must be a pydantic model")
            self.specs.append(
                ToolSpec(
                    name=name or fn.__name__,
                    title=title,
                    description=inspect.cleandoc(fn.__doc__ or ""),
                    args=args_model,
                    result=result_model,
                    fn=fn,
                    annotations=ToolAnnotations(
                        title=title,
                        read_only_hint=read_only,
                        destructive_hint=destructive,
                        idempotent_hint=idempotent,
                        open_world_hint=False,
                    ),
                    mirror=mirror or json_mirror,
                    links=links,
                    declares_supersede=declares_supersede,
                )
            )
            return fn

        return decorator


# --- errors ---------------------------------------------------------------------------------------


def unstorable_text(arguments: Any) -> errors.ZMError | None:
    """A NUL character or a lone surrogate anywhere in the arguments (names included), by where it is.

    Neither can be stored — PostgreSQL text refuses NUL, UTF-8 has no surrogates — and a store that meets
    one mid-query fails as a crash, so every tool refuses them here, before any service sees the call.
    """
    pending: deque[tuple[tuple[str | int, ...], Any]] = deque([((), arguments)])
    while pending:
        loc, value = pending.popleft()
        if isinstance(value, dict):
            for key, item in value.items():
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    return errors.validation(f"{location((*loc, key))}: the argument's name {problem}")
                pending.append(((*loc, key), item))
        elif isinstance(value, list | tuple):
            pending.extend(((*loc, index), item) for index, item in enumerate(value))
        elif isinstance(value, str):
            problem = _text_problem(value)
            if problem is not None:
                return errors.validation(f"{location(loc)}: {problem}")
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def safe_text(error: errors.ZMError) -> str:
    """The error's text, unless it would quote something that looks like a credential."""
    text = str(error)
    finding = guard.find_secret(text)
    if finding is None:
        return text
    return str(
        errors.ZMError(
            error.code,
            f"the message quoted a value that looks like a credential ({finding.detector}); it is not repeated",
            subcode=error.subcode,
        )
    )


def error_result(error: errors.ZMError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=safe_text(error))], is_error=True)


INTERNAL = errors.internal("the server failed on this call and logged why; retrying may help")


# --- running a call -------------------------------------------------------------------------------


async def _attach(
    app: App, who: Caller, session: str | None, workspace: Callable[[], Awaitable[str | None]] | None
) -> None:
    """Attach a session that is attached to nothing yet to the repository it works in, where that is known:
    the caller's workspace (stdio), else the client's roots (asked only while the session is unattached)."""
    if session is None or (who.workspace is None and workspace is None):
        return
    if await anyio.to_thread.run_sync(partial(is_attached, app.store, who.uid, session)):
        return
    where = who.workspace or (await workspace() if workspace is not None else None)
    if where is None:
        return
    attach = partial(attach_workspace, app.store, who.uid, session, where, at=utcnow())
    await anyio.to_thread.run_sync(partial(attach, auto_create=app.settings.auto_create_projects))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the usage event records about one call."""

    code: str
    declared_supersede: bool = False


async def invoke(
    spec: ToolSpec[Any, Any],
    arguments: dict[str, Any],
    app: App,
    caller: Callable[[], Caller],
    workspace: Callable[[], Awaitable[str | None]] | None = None,
) -> CallToolResult:
    """Run one tool call end to end; never raises for anything the call itself did wrong.

    ``workspace`` asks the client where it works (its roots), for a session whose caller knows no workspace.
    """
    who: Caller | None = None
    outcome = Outcome(errors.Code.INTERNAL.value)
    try:
        who = caller()
        args = spec.parse(arguments)
        declared = bool(spec.declares_supersede and spec.declares_supersede(args))
        outcome = Outcome(errors.Code.INTERNAL.value, declared)
        await _attach(app, who, getattr(args, "session_id", None) or who.session_id, workspace)
        result = spec.render(await spec.run(ToolCall(app=app, caller=who), args))
        outcome = Outcome("ok", declared)
        return result
    except errors.ZMError as error:
        outcome = Outcome(error.code.value, outcome.declared_supersede)
        return error_result(error)
    except ValidationError as error:
        # A service re-validating what the tool handed it: still the caller's input.
        outcome = Outcome(errors.Code.VALIDATION_FAILED.value, outcome.declared_supersede)
        return error_result(invalid_input(error))
    except Exception:
        log.exception("tool %s failed", spec.name)
        return error_result(INTERNAL)
    finally:
        if who is not None:
            if app.telemetry.buffering:
                # Only queued: no hand-off to a thread for it.
                record_usage(app, who, spec.name, outcome)
            else:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(record_usage, app, who, spec.name, outcome)


def record_usage(app: App, caller: Caller, tool: str, outcome: Outcome) -> None:
    """Record the call's usage event (``zero_memory.telemetry``); never fails the call it describes."""
    app.telemetry.record(
        UsageEvent(
            user_id=caller.uid,
            tool=tool,
            client=caller.client,
            outcome=outcome.code,
            declared_supersede=outcome.declared_supersede,
            at=app.clock(),
        )
    )
