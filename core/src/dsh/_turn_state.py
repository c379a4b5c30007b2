"""The running turn's state: what the step runner (``dsh._steps``) and the closers that
keep the log balanced need to know about it, and how an abort or a disposal ends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio

from dsh.messages import ToolCall, Usage

if TYPE_CHECKING:
    from dsh.llm.assemble import Assembler

__all__ = ["TurnState"]

_STRENGTH: Final = {"disposed": 3, "aborted": 2}
NO_USAGE: Final = Usage()  # frozen: each step's usage is added to make a new one


class TurnState:
    """What the closers need to know about the running turn."""

    __slots__ = (
        "cancelled",
        "ended_by",
        "logged",
        "max_tokens",
        "number",
        "open_step",
        "pending",
        "prompts",
        "running",
        "scope",
        "settled",
        "stopped",
        "streaming",
        "unsent",
        "usage",
    )

    def __init__(self, number: int, prompts: list[str] | None = None) -> None:
        self.number = number
        self.prompts = prompts or []  # the queued prompts the turn took
        self.ended_by: str | None = None  # "aborted" | "disposed"
        #: The turn's outcome is known (it failed, or its last step decided to stop): an
        #: abort() now has no step to stop and changes nothing; disposal still counts.
        self.settled = False
        self.cancelled = False  # by cancel(): a turn not yet started is dropped
        self.scope: anyio.CancelScope | None = None
        self.open_step: int | None = None
        self.pending: list[ToolCall] = []  # calls of this step that have no result yet
        self.logged: set[str] = set()  # ids of pending calls whose tool/call is logged
        self.running: str | None = None  # the id of the call tools_execute is running
        self.max_tokens = False
        self.stopped: str | None = None  # the reason a plugin gave for stopping the turn
        #: a plugin's reason to continue given at the step limit's last step: no step
        #: answers it, so it is not logged as steering but named in the turn's error
        self.unsent: str | None = None
        self.usage = NO_USAGE
        #: The model stream in progress (its assembler and the model's name), until it
        #: finishes: a turn that ends inside it keeps the text streamed so far.
        self.streaming: tuple[Assembler, str] | None = None

    def abort(self, reason: str) -> None:
        if self.settled and reason == "aborted":
            return
        if _STRENGTH[reason] > _STRENGTH.get(self.ended_by or "", 0):
            self.ended_by = reason
        if self.scope is not None:
            self.scope.cancel()

    def stopping(self) -> bool:
        """A method, not a property: it changes under awaits, so never narrow it."""
        return self.ended_by is not None
