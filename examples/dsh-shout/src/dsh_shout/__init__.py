"""dsh-shout: agents whose options say ``shout: true`` answer in capital letters.

A deliberately small third-party dsh plugin. It implements one hook,
``agent_step_result``: a waterfall over the assistant message of each step, called
before the message is logged, so the session log, the next request and every later
plugin see the shouted text. Reasoning and tool calls are left as the model made them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from dsh import hookimpl  # cheap: dsh loads the rest of its package when it is used

if TYPE_CHECKING:  # pydantic models: imported when a hook runs, not by every `dsh` command
    from dsh import AssistantMessage

__all__ = ["agent_step_result"]


class _Configured(Protocol):
    """The one thing this plugin needs from the agent it is called for."""

    @property
    def options(self) -> Mapping[str, Any]: ...


@hookimpl
def agent_step_result(agent: _Configured, message: AssistantMessage) -> AssistantMessage | None:
    """Upper-case the message's text blocks when the agent's option ``shout`` is true.

    Takes only the hook arguments it uses (dsh passes an impl just the ones it names)
    and returns None, "unchanged", whenever there is nothing to change.
    """
    if agent.options.get("shout") is not True:
        return None
    from dsh import TextBlock

    content = tuple(
        block.model_copy(update={"text": block.text.upper()})
        if isinstance(block, TextBlock)
        else block
        for block in message.content
    )
    if content == message.content:
        return None
    # Messages are frozen: return a changed copy, never mutate what others may hold.
    return message.model_copy(update={"content": content})
