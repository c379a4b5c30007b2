"""Approvals: asking a front end about a call, and the answers a session remembers.

``permission_ask`` (see ``hookspecs``) is called with a ``PermissionRequest``; the first
front end that returns a ``PermissionAnswer`` decides. No front end, none answering,
one raising, an answer that is not a ``PermissionAnswer``, or no answer before the
timeout: the call is denied, with the reason.

"Always" answers are not kept anywhere but the session log: each is part of its
``permission/decision`` event, and the grants in force are folded from the log on
first use (so a resumed or forked session keeps them), then incrementally.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio

from dsh_permissions._decide import Grant

if TYPE_CHECKING:
    from dsh import ToolCall

__all__ = [
    "ASK_HOOK",
    "DECISION_EVENT",
    "Asked",
    "GrantLog",
    "PermissionAnswer",
    "PermissionRequest",
    "ask_front_ends",
]

ASK_HOOK: Final = "permission_ask"
DECISION_EVENT: Final = "permission/decision"


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """What a front end shows a person: the call, why it is asked about, and what
    "allow always" would remember."""

    tool: str
    call_id: str
    #: the raw JSON arguments the model sent
    arguments: str
    mode: str
    #: why the call needs approval, in words
    reason: str
    #: the ``ask`` rule that applies, if a rule (rather than the mode) asks
    rule: str | None
    #: each thing awaiting approval: ``(kind, value)``, kind one of tool, path,
    #: command, redirect
    subjects: tuple[tuple[str, str], ...]
    #: what "always" remembers for this session; empty: it would only allow once
    remember: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """A front end's answer. Build one with ``once()``, ``always()`` or ``deny(msg)``."""

    choice: Literal["once", "always", "deny"]
    #: told to the model with a denial
    message: str = ""

    @classmethod
    def once(cls) -> PermissionAnswer:
        return cls("once")

    @classmethod
    def always(cls) -> PermissionAnswer:
        return cls("always")

    @classmethod
    def deny(cls, message: str = "") -> PermissionAnswer:
        return cls("deny", message)


@dataclass(frozen=True, slots=True)
class Asked:
    """The outcome of asking: an answer and who gave it, or why there is none."""

    answer: PermissionAnswer | None
    front_end: str | None = None
    why: str = ""


async def ask_front_ends(
    agent: Any, call: ToolCall, request: PermissionRequest, within: float | None
) -> Asked:
    """Call ``permission_ask`` impls in hook order until one answers."""
    impls = _impls(agent)
    if not impls:
        return Asked(None, why="no front end that can ask a person is loaded (non-interactive)")
    kwargs = {"agent": agent, "call": call, "request": request}
    with anyio.move_on_after(math.inf if within is None else within):
        for impl in impls:
            try:
                result = impl.call(kwargs)
                if impl.is_async:
                    result = await result
            except Exception as exc:
                why = f"the front end {impl.plugin_name!r} failed: {type(exc).__name__}: {exc}"
                return Asked(None, impl.plugin_name, why)
            if result is None:
                continue
            if not isinstance(result, PermissionAnswer):
                why = f"the front end {impl.plugin_name!r} answered {type(result).__name__}"
                return Asked(None, impl.plugin_name, why + ", not a PermissionAnswer")
            return Asked(result, impl.plugin_name)
        return Asked(None, why="no front end answered (none could ask a person)")
    return Asked(None, why=f"no answer came within {within:g} seconds")


def _impls(agent: Any) -> Sequence[Any]:
    # The one place that reaches past dsh's public API: the hook is this plugin's own,
    # and the agent's relay is how an impl can call it (in hook order, with the
    # answering plugin's name). See the README, "What dsh-core could add".
    dispatcher = getattr(getattr(agent, "relay", None), "dispatcher", None)
    if dispatcher is None:
        return ()
    impls: Sequence[Any] = dispatcher.plan(ASK_HOOK)
    return impls


@dataclass(slots=True)
class GrantLog:
    """The "always" grants of one session, folded from its log as it grows."""

    session: object = None
    seen: int = 0
    grants: set[Grant] = field(default_factory=set)

    def current(self, session: Any) -> set[Grant]:
        if session is not self.session:
            self.session, self.seen, self.grants = session, 0, set()
        events = session.events
        for index in range(self.seen, len(events)):
            event = events[index]
            if event.type == DECISION_EVENT and event.data.get("answer") == "always":
                for item in event.data.get("remember") or ():
                    grant = _grant(item)
                    if grant is not None:
                        self.grants.add(grant)
        self.seen = len(events)
        return self.grants


def _grant(item: object) -> Grant | None:
    if not isinstance(item, dict):
        return None
    values = (item.get("tool"), item.get("kind"), item.get("value"))
    if not all(isinstance(v, str) for v in values):
        return None
    return (str(values[0]), str(values[1]), str(values[2]))
