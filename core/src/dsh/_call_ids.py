"""Tool call ids an answer repeats. Two calls of one answer sharing an id cannot both
be answered: the next request would hold two results for one id (which providers
refuse), and a turn closed on load would merge them. The repeat is renamed and not run;
its error result says why (``dsh._steps``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh.messages import ToolCall

if TYPE_CHECKING:
    from dsh.messages import AssistantMessage

__all__ = ["renamed_repeats"]


def renamed_repeats(
    message: AssistantMessage, calls: list[ToolCall]
) -> tuple[AssistantMessage, list[ToolCall], dict[str, str]]:
    """``message`` (whose calls are ``calls``) with each call whose id an earlier call
    has renamed (``<id>-2``..., an id no call of it has), its calls, and new id -> why
    that call is not run. As given, and no reasons, when no id repeats (the usual case)."""
    ids = {call.id for call in calls}
    if len(ids) == len(calls):
        return message, calls, {}
    seen: set[str] = set()
    why: dict[str, str] = {}
    content = []
    for block in message.content:
        if isinstance(block, ToolCall):
            if block.id in seen:
                number = 2
                while f"{block.id}-{number}" in ids:
                    number += 1
                new = f"{block.id}-{number}"
                ids.add(new)
                why[new] = (
                    f"not run: this call had the id {block.id!r} of an earlier call of the "
                    f"same answer (renamed {new!r}); each call needs its own id: call it "
                    "again if it is still needed"
                )
                block = block.model_copy(update={"id": new})
            seen.add(block.id)
        content.append(block)
    message = message.model_copy(update={"content": tuple(content)})
    return message, message.tool_calls, why
