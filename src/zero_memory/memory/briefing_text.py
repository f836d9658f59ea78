"""A briefing as text, and how much of each section fits a character budget.

The text is what an agent reads from ``zm context`` and the
``additionalContext`` a SessionStart hook hands to Claude Code; it is also the
MCP tool's text mirror. Claude Code and Codex hand the model the JSON of the
tool's structured content instead, so the budget holds for both copies
(``size``): the longer of the two, which is the JSON. ``fit`` is the pure
decision: how many items of each section, taken in each section's order, fit
the budget when every section first gets its share and what one leaves is
handed on to the next.
"""

from __future__ import annotations

from collections.abc import Sequence

from zero_memory.memory.context_models import Briefing, BriefingItem, BriefingSection

ITEM_CHARS = 600
"""A longer memory is cut in the briefing (``truncated``); ``get_memory`` has it whole."""

SECTION_SHARES = (0.3, 0.35, 0.35)
"""Rules, open loops, memories: each section's first claim on the budget."""

TRIAGE_POINTER = "run the `triage` prompt (or open the dashboard's review queue) to settle them"


def fit(costs: Sequence[Sequence[int]], room: int, shares: Sequence[float] = SECTION_SHARES) -> list[int]:
    """How many leading items of each section fit in ``room`` characters.

    First each section takes items, in order, up to its share of the room;
    then what is left goes to the sections in order, each taking more of its
    items while they fit. Items are only ever taken as a prefix, so a section
    keeps its order (pinned first, oldest first, best first).
    """
    if len(costs) != len(shares):
        raise ValueError("one share per section")
    counts = [0] * len(costs)
    used = 0
    for index, (section, share) in enumerate(zip(costs, shares, strict=True)):
        allowance = max(0, int(room * share))
        spent = 0
        while counts[index] < len(section) and spent + section[counts[index]] <= allowance:
            spent += section[counts[index]]
            counts[index] += 1
        used += spent
    left = max(0, room - used)
    for index, section in enumerate(costs):
        while counts[index] < len(section) and section[counts[index]] <= left:
            left -= section[counts[index]]
            counts[index] += 1
    return counts


def cut(text: str, limit: int = ITEM_CHARS) -> tuple[str, bool]:
    """The text within ``limit`` characters, and whether it was cut."""
    text = text.strip()
    if len(text) <= limit:
        return text, False
    return text[: limit - 1].rstrip() + "…", True


def age(days: float) -> str:
    if days < 1:
        return "today"
    if days < 90:
        return f"{int(days)}d"
    if days < 730:
        return f"{round(days / 30.44)}mo"
    return f"{round(days / 365.25)}y"


def size(briefing: Briefing) -> int:
    """What the briefing's budget holds for: its text or its JSON (as a client hands it over), the longer."""
    return max(len(render(briefing)), len(briefing.model_dump_json()))


def item_size(item: BriefingItem) -> int:
    """What one item adds to ``size``, its separator included."""
    return max(len(item_text(item)), len(item.model_dump_json())) + 1


def item_text(item: BriefingItem) -> str:
    facts = [item.id, item.kind.value, item.scope]
    facts.append(f"open {age(item.open_days)}" if item.open_days is not None else age(item.age_days))
    if item.pinned:
        facts.append("PINNED")
    body = item.content.replace("\n", "\n  ")
    return f"- {' · '.join(facts)}\n  {body}"


HEADINGS = (
    ("rules", "## Rules: follow these (pinned first)", "recall with kinds convention, preference"),
    ("open_loops", "## Open loops: oldest first", "zm loops, or recall with kinds task, open-question"),
    ("memories", "## Memories", "recall"),
)


CODE_CHANGED_HEADING = "## Code changed since verified: re-check these against the code before relying on them"
BRIEFING_SHARES = {
    "rules": SECTION_SHARES[0],
    "open_loops": SECTION_SHARES[1],
    "memories": SECTION_SHARES[2] - 0.1,
    "code_changed": 0.1,
}
"""The briefing's sections of items, in order, and each one's first claim on the budget: the three above, the
memories' share lending a tenth to those whose code changed (a share a section does not use goes to the others)."""


def render(briefing: Briefing) -> str:
    lines = [_title(briefing), _writes(briefing)]
    for name, heading, more in HEADINGS:
        section: BriefingSection = getattr(briefing, name)
        lines += ["", heading]
        lines += [item_text(item) for item in section.items]
        if section.omitted:
            lines.append(f"({section.omitted} more not shown: {more})")
        elif not section.items:
            lines.append("(none)")
    changed = briefing.code_changed
    if changed.items or changed.omitted:
        # Only when there is something: most briefings have no memory whose code moved under it.
        lines += ["", CODE_CHANGED_HEADING]
        lines += [item_text(item) for item in changed.items]
        if changed.omitted:
            lines.append(f"({changed.omitted} more not shown: zm conflicts list --verdict outdated)")
    lines += ["", "## Pending reviews", _pending(briefing)]
    return "\n".join(lines)


def _title(briefing: Briefing) -> str:
    title = "# zero-memory briefing"
    if briefing.project:
        title += f" for {briefing.project}"
    if briefing.topic:
        title += f" · topic: {cut(briefing.topic, 200)[0]}"
    return title


def _writes(briefing: Briefing) -> str:
    """Where a remember with no scope goes, as true for the agent's own calls.

    A session attached to a project writes there. A briefing for a repository's project, with no session
    (the SessionStart hook's), speaks for the agent's stdio server, which is attached to the repository it
    was started in. With neither, nothing is written without a scope: the server never picks one.
    """
    attached = briefing.session.attached_project
    if attached:
        return f"A remember with no scope writes to {attached}."
    if briefing.project:
        return f"In this repository a remember with no scope writes to {briefing.project}."
    return (
        "This session is in no repository and writes to no project by default: "
        'give remember a scope ("personal" for a memory of your own) or a project_hint (a repository path).'
    )


def _pending(briefing: Briefing) -> str:
    count = briefing.pending_reviews.count
    if not count:
        return "Nothing waits for review."
    rows = "row waits" if count == 1 else "rows wait"
    return f"{count} review-queue {rows} for you: {briefing.pending_reviews.pointer or TRIAGE_POINTER}."
