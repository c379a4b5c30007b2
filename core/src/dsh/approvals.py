"""Asking a person whether a tool call may run: the question (``ApprovalRequest``) and
its answer (``ApprovalAnswer``), which front ends give through the ``tools_approval``
hook.

The core never asks on its own: a plugin that decides which calls need approval (such
as dsh-permissions) asks, with ``await agent.relay.tools_approval(agent, call,
request)``, and a front end (the ``dsh chat`` terminal, an editor, a chat bridge)
answers, knowing nothing of the plugin that asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, Self

__all__ = ["CHOICES", "UNANSWERED", "ApprovalAnswer", "ApprovalRequest"]

#: What a front end may answer; anything else is refused when the answer is built.
CHOICES: Final = ("once", "always", "deny")
#: How a ``deny`` message begins when no one answered (the input ended, say): the asker
#: tells the model that, not that the user refused.
UNANSWERED: Final = "no answer:"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What a front end shows a person: the call, why it is asked about, and what
    "allow always" would remember."""

    tool: str
    #: the raw JSON arguments the model sent
    arguments: str
    #: why the call needs approval, in words
    reason: str
    #: what "always" remembers for this session, each ``(kind, value)`` (kinds are the
    #: asker's: dsh-permissions' are tool, path, command, redirect); empty: it would
    #: only allow once, and a front end should not offer it
    remember: tuple[tuple[str, str], ...] = ()
    #: seconds the question waits before it is denied unanswered (None: no limit), so
    #: a front end can say so under the question
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """A front end's answer. Build one with ``once()``, ``always()`` or ``deny(msg)``."""

    choice: Literal["once", "always", "deny"]
    #: told to the model with a denial
    message: str = ""

    def __post_init__(self) -> None:
        name = type(self).__name__
        if self.choice not in CHOICES:
            raise ValueError(
                f"{name} choice must be one of {', '.join(CHOICES)}, not {self.choice!r}"
            )
        if type(self.message) is not str:
            raise TypeError(f"{name} message must be a str, not {self.message!r}")

    @classmethod
    def once(cls) -> Self:
        """This call runs."""
        return cls("once")

    @classmethod
    def always(cls) -> Self:
        """This call runs, and ``request.remember`` is allowed for the rest of the
        session (where ``remember`` is empty: this call only)."""
        return cls("always")

    @classmethod
    def deny(cls, message: str = "") -> Self:
        """A refusal, ``message`` told to the model; a ``message`` beginning ``no
        answer:`` (``UNANSWERED``) says no one answered (the input ended), and the model
        is told so, not that the user refused."""
        return cls("deny", message)
