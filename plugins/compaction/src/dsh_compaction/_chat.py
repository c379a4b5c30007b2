"""``/compact`` in ``dsh chat``: compact the history now (``compact_now``). Registered
through ``register_chat_commands``; imported when a chat starts."""

from __future__ import annotations

from collections.abc import Callable

import dsh_compaction
from dsh import DshError
from dsh.commands import ChatCommand, ChatCommandContext

__all__ = ["register_chat_commands"]


async def compact(context: ChatCommandContext) -> str:
    """The result of compacting the chat agent's history now; a compaction that failed
    is the command's failure ("nothing to compact" is none)."""
    result = await dsh_compaction.compact_now(context.agent)
    if result.outcome == "failed":
        raise DshError(str(result))
    return str(result)


def register_chat_commands(register: Callable[..., None]) -> None:
    register(
        ChatCommand(
            "compact",
            "compact the history now",
            compact,
            # true when shown: compact_now stops only before the summary is logged
            stopped="stopped; the history is as it was",
        )
    )
