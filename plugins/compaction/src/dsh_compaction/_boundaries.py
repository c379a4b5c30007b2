"""Where a history may be cut without separating a tool call from its result.

Providers refuse a tool result whose call they cannot see, and a call without its
result. So the summarised region and the kept tail must each hold whole *units*: an
assistant message with tool calls together with every result of those calls. A cut
point is an index at which no call made before it is still waiting for its result, and
that does not hold a tool result itself. Everything here is pure and tested as a
property over random histories.
"""

from __future__ import annotations

from collections.abc import Sequence

from dsh import AssistantMessage, Message, ToolResultMessage

__all__ = ["answered_by", "choose_cut", "cut_points", "units"]


def answered_by(messages: Sequence[Message]) -> dict[int, int]:
    """For each tool result, the index of the assistant message whose call it answers
    (results whose call is nowhere before them are left out).

    Call ids may repeat across steps (some providers count from 0 per message), so a
    result answers the earliest unanswered call with its id.
    """
    waiting: dict[str, list[int]] = {}
    owners: dict[int, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                waiting.setdefault(call.id, []).append(index)
        elif isinstance(message, ToolResultMessage):
            queue = waiting.get(message.call_id)
            if queue:
                owners[index] = queue.pop(0)
    return owners


def cut_points(messages: Sequence[Message]) -> list[int]:
    """Indices ``0 < i < len(messages)`` where ``messages[:i]`` and ``messages[i:]`` can
    be separated: every call before ``i`` has its result before ``i``, and
    ``messages[i]`` is not a tool result. Ascending."""
    waiting: dict[str, int] = {}
    open_calls = 0
    points: list[int] = []
    for index, message in enumerate(messages):
        is_result = isinstance(message, ToolResultMessage)
        if index and not open_calls and not is_result:
            points.append(index)
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                waiting[call.id] = waiting.get(call.id, 0) + 1
                open_calls += 1
        elif isinstance(message, ToolResultMessage) and waiting.get(message.call_id, 0) > 0:
            waiting[message.call_id] -= 1
            open_calls -= 1
    return points


def units(messages: Sequence[Message], indices: set[int]) -> set[int]:
    """``indices`` closed over tool pairing: with an assistant message come all results
    of its calls, with a result come its assistant message and that message's other
    results."""
    owners = answered_by(messages)
    results: dict[int, list[int]] = {}
    for result, owner in owners.items():
        results.setdefault(owner, []).append(result)
    closed: set[int] = set()
    for index in indices:
        owner = owners.get(index, index)
        closed.add(owner)
        closed.update(results.get(owner, ()))
    return closed


def choose_cut(
    points: Sequence[int], counts: Sequence[int], budget: int, after: int = 0
) -> int | None:
    """The cut point that keeps the largest tail within ``budget`` tokens; when even the
    last unit is larger, the last cut point (the tail is never empty). Only points
    greater than ``after`` qualify (``after=1`` when ``messages[0]`` is a previous
    summary, so a cut always takes something new). None if no point qualifies."""
    candidates = [p for p in points if p > after]
    if not candidates:
        return None
    tail = 0
    position = len(counts)
    # walk the candidates from the end, growing the tail while it fits
    chosen = candidates[-1]
    for point in reversed(candidates):
        tail += sum(counts[point:position])
        position = point
        if tail > budget:
            break
        chosen = point
    return chosen
