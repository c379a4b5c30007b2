"""The compact/* session events and the history reducers that replay them.

A compaction changes what the model sees, so it is logged: ``compact/prune`` (bulky old
tool results replaced by a stub) and ``compact/summary`` (the older history replaced by
one summary message) carry everything the reducers need, and the reducers are pure
functions of the event. Replaying a stored log therefore derives the very history the
live session had, and the next request after a resume is the one it would have sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from dsh import Message, ToolResultMessage, ToolSpec, UserMessage
from dsh.session import SessionEvent

__all__ = [
    "END",
    "PRUNE",
    "START",
    "SUMMARY",
    "SUMMARY_HEADER",
    "logged_summary",
    "opening_summary",
    "previous_summary",
    "prune_stub",
    "reduce_prune",
    "reduce_summary",
    "summary_message",
    "too_large_stub",
    "without_header",
]

START: Final = "compact/start"
PRUNE: Final = "compact/prune"
SUMMARY: Final = "compact/summary"
END: Final = "compact/end"

#: Opens every summary message; it also tells the next compaction where the previous
#: summary is (to merge it). Changing it changes how old logs replay: never do.
SUMMARY_HEADER: Final = (
    "[Summary of the earlier conversation. It was written to keep the session inside "
    "the context window and replaces the messages it covers.]\n\n"
)


def summary_message(summary: str) -> UserMessage:
    """The message that stands in for the summarised history."""
    return UserMessage(content=SUMMARY_HEADER + summary)


def without_header(text: str) -> str:
    """A summary's ``text`` (stripped) without the ``SUMMARY_HEADER`` it opens with,
    if it does (a summariser that copied it from the summary it merged, a plugin that
    returned a whole summary message): ``summary_message`` adds it once."""
    header = SUMMARY_HEADER.rstrip()
    while text.startswith(header):
        text = text[len(header) :].lstrip()
    return text


def previous_summary(message: Message) -> str | None:
    """The summary text if ``message`` reads as a summary message, else None. Whether
    it is one only the log says (``opening_summary``): a user may write the header."""
    if isinstance(message, UserMessage) and message.content.startswith(SUMMARY_HEADER):
        return message.content[len(SUMMARY_HEADER) :]
    return None


def logged_summary(events: Sequence[SessionEvent]) -> str | None:
    """The text of the latest ``compact/summary`` of ``events`` (None: none)."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.type == SUMMARY and isinstance(text := event.data.get("summary"), str):
            return text
    return None


def opening_summary(history: Sequence[Message], logged: str | None) -> str | None:
    """The summary ``history`` opens with, as it reads now: once the log has a
    ``compact/summary`` (``logged``: the latest's text), whose reducer put its message
    first, a first message with the header is it (another plugin's reducer may have
    rewritten it since); None when the log has none (a user message that starts with
    the header is the user's) or the history does not open with one."""
    if logged is not None and history:
        return previous_summary(history[0])
    return None


def prune_stub(message: ToolResultMessage) -> str:
    """What a pruned tool result says instead of its output."""
    return (
        f"[output of {message.name} removed to save context: {len(message.content)} "
        "characters; run the tool again if it is still needed]"
    )


#: arguments by which a tool's caller asks for a part of what it returns
PART_ARGUMENTS: Final = frozenset(
    {"offset", "limit", "start_line", "end_line", "max_lines", "head", "tail", "skip"}
    | {"page", "page_size", "max_results", "max_bytes", "max_chars", "max_length"}
)


def too_large_stub(message: ToolResultMessage, tokens: int, tool: ToolSpec | None = None) -> str:
    """What a tool result too large for the window on its own says instead: what to do,
    for a model that would otherwise make the same call again (by the arguments of
    ``tool``'s schema that choose a part, when it has any)."""
    properties = tool.parameters.get("properties") if tool else None
    parts = [n for n in properties if n in PART_ARGUMENTS] if isinstance(properties, dict) else []
    if len(parts) == 1:
        how = f" with the argument {parts[0]}"
    elif parts:
        how = f" with the arguments {', '.join(parts[:-1])} and {parts[-1]}"
    else:
        how = " (a narrower command or query, or fewer lines or items)"
    return (
        f"[output of {message.name} removed: {len(message.content)} characters, about "
        f"{tokens} tokens, too large for the model's context window; making the same call "
        f"again gives the same result: ask for a smaller part of it{how}]"
    )


def reduce_summary(history: list[Message], event: SessionEvent) -> list[Message]:
    """``compact/summary``: the first ``replaces`` messages become the summary message,
    followed by the ``kept`` ones among them (verbatim, in order), then the rest."""
    data = event.data
    replaces = min(int(data["replaces"]), len(history))
    kept: Sequence[Any] = data.get("kept", ())
    carried = [history[i] for i in kept if isinstance(i, int) and 0 <= i < replaces]
    return [summary_message(data["summary"]), *carried, *history[replaces:]]


def reduce_prune(history: list[Message], event: SessionEvent) -> list[Message] | None:
    """``compact/prune``: each listed tool result gets the logged stub as its content.

    An entry whose index does not hold the named call's result is skipped, so a log
    replayed with other reducers never swaps the wrong message.
    """
    replaced = list(history)
    changed = False
    for entry in event.data["pruned"]:
        index = entry["index"]
        if not 0 <= index < len(replaced):
            continue
        message = replaced[index]
        if isinstance(message, ToolResultMessage) and message.call_id == entry["call_id"]:
            replaced[index] = message.model_copy(update={"content": entry["content"]})
            changed = True
    return replaced if changed else None
