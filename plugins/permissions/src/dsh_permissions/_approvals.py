"""Approvals: asking a front end about a call, and the answers a session remembers.

A call is put to the ``permission_ask`` impls first (see ``hookspecs``), with a
``PermissionRequest``; when none answers, to the core's ``tools_approval`` front ends
(``dsh.approvals``: the ``dsh chat`` terminal is one), with the ``ApprovalRequest``
made of it. The first that answers decides. No front end, none answering, one raising,
an answer of the wrong type, or no answer before the timeout: the call is denied, with
the reason; one raising or answering the wrong type is reported too (``relay.report``),
as dsh reports a failure it carries on without.

"Always" answers are not kept anywhere but the session log: each is part of its
``permission/decision`` event, and the grants in force are folded from the log on
first use (so a resumed or forked session keeps them), then incrementally, and only
when a decision needs them (``GrantLog.until``). Each grant holds in the workspace it
was given in: a command's text is relative to its workspace (``./deploy.sh``), so a
session continued elsewhere does not carry it there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import anyio

from dsh import redact
from dsh.approvals import UNANSWERED, ApprovalAnswer, ApprovalRequest
from dsh.errors import HookError, exception_words

if TYPE_CHECKING:
    from dsh import ToolCall

__all__ = [
    "ASK_HOOK",
    "DECISION_EVENT",
    "UNANSWERED",
    "Asked",
    "GrantLog",
    "Grants",
    "PermissionAnswer",
    "PermissionRequest",
    "ask_front_ends",
    "said",
]

ASK_HOOK: Final = "permission_ask"
#: the core's hook, asked when no ``permission_ask`` impl answers
CORE_HOOK: Final = "tools_approval"
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
    #: seconds the question waits before it is denied unanswered (None: no limit), so
    #: a front end can say so under the question
    timeout: float | None = None

    def question(self) -> ApprovalRequest:
        """The request as the core's ``tools_approval`` front ends get it."""
        return ApprovalRequest(self.tool, self.arguments, self.reason, self.remember, self.timeout)


@dataclass(frozen=True, slots=True)
class PermissionAnswer(ApprovalAnswer):
    """A ``permission_ask`` front end's answer: the core's ``ApprovalAnswer``, under the
    name this plugin's hook has. Build one with ``once()``, ``always()`` or
    ``deny(msg)``; a ``deny`` message beginning ``no answer:`` (``UNANSWERED``) says no
    one answered (the input ended), and the model is told so, not that the user
    refused."""


@dataclass(frozen=True, slots=True)
class Asked:
    """The outcome of asking: an answer and who gave it, or why there is none."""

    answer: PermissionAnswer | None
    front_end: str | None = None
    why: str = ""


async def ask_front_ends(
    agent: Any, call: ToolCall, request: PermissionRequest, within: float | None
) -> Asked:
    """Call ``permission_ask`` impls in hook order until one answers, then, when none
    has, the core's ``tools_approval`` impls; ``within`` seconds for both."""
    relay = getattr(agent, "relay", None)
    own = relay is not None and relay.implemented(ASK_HOOK)
    if relay is None or not (own or relay.implemented(CORE_HOOK)):
        return Asked(
            None,
            why="no front end that can ask a person is loaded (a non-interactive run, such as "
            "dsh run with no terminal; a rule in permissions.allow lets such a call run "
            "without asking)",
        )
    asked: Asked | None = None
    deadline = math.inf if within is None else anyio.current_time() + within
    with anyio.CancelScope(deadline=deadline) as scope:
        asked = await _ask(relay, own, agent, call, request, deadline)
    if scope.cancel_called:  # an answer a front end gave once the time was up counts not
        return Asked(None, why=f"no answer came within {within:g} seconds")
    assert asked is not None
    return asked


async def _ask(
    relay: Any, own: bool, agent: Any, call: ToolCall, request: PermissionRequest, deadline: float
) -> Asked:
    try:
        if own:
            answered = await relay.call_first_named(
                ASK_HOOK, agent=agent, call=call, request=request
            )
            if answered is not None:
                return _answer(relay, ASK_HOOK, answered, PermissionAnswer)
        if relay.implemented(CORE_HOOK):
            question = request.question()
            if own and request.timeout is not None:  # what permission_ask left of it
                left = max(deadline - anyio.current_time(), 0.0)
                question = replace(question, timeout=min(left, request.timeout))
            answered = await relay.tools_approval(agent, call, question)
            if answered is not None:  # a harness's relay refuses another type already
                return _answer(relay, CORE_HOOK, answered, ApprovalAnswer)
    except HookError as exc:
        relay.report(exc)  # logged, and in an ErrorRecorder's failures: not only a deny
        return Asked(None, exc.plugin, f"the front end {exc.plugin!r} failed: {said(exc.cause)}")
    return Asked(None, why="no front end answered (none could ask a person)")


def said(cause: BaseException) -> str:
    """``Type: message``, ``Type`` alone for an empty message, as dsh words a failure,
    with the keys dsh holds hidden: a reason is logged in the session and read by the
    model."""
    return redact(exception_words(cause))


def _answer(
    relay: Any, hook: str, answered: tuple[str, object], expect: type[ApprovalAnswer]
) -> Asked:
    """The answer a front end gave, as this plugin's; refused unless an ``expect``, and
    reported then (as a harness's relay reports a ``tools_approval`` one)."""
    front_end, result = answered
    if not isinstance(result, expect):
        wrong = TypeError(f"returned {type(result).__name__} where {expect.__name__} is expected")
        relay.report(relay.failure(front_end, hook, wrong))
        article = "an" if expect.__name__[0] in "AEIOU" else "a"
        why = f"the front end {front_end!r} answered {type(result).__name__}"
        return Asked(None, front_end, f"{why}, not {article} {expect.__name__}")
    if isinstance(result, PermissionAnswer):  # kept as given: a forged choice denies
        return Asked(result, front_end)
    try:
        return Asked(PermissionAnswer(result.choice, result.message), front_end)
    except (TypeError, ValueError) as exc:  # altered after it was built (it is frozen)
        return Asked(None, front_end, f"the front end {front_end!r} answered badly: {exc}")


@dataclass(slots=True)
class GrantLog:
    """The "always" grants of one session, folded from its log as it grows."""

    session: object = None
    seen: int = 0
    #: (tool, kind, value, workspace) of each grant
    grants: set[tuple[str, str, str, str]] = field(default_factory=set)

    def current(self, session: Any, end: int | None = None) -> set[tuple[str, str, str, str]]:
        """The grants of the first ``end`` events of ``session`` (None: all of them),
        each with the workspace it holds in."""
        if session is not self.session:
            self.session, self.seen, self.grants = session, 0, set()
        events = session.events
        end = len(events) if end is None else end
        if end > self.seen:
            for event in events[self.seen : end]:  # a copy of the new ones only
                if event.type == DECISION_EVENT and event.data.get("answer") == "always":
                    for item in event.data.get("remember") or ():
                        grant = _grant(item)
                        if grant is not None:
                            self.grants.add(grant)
            self.seen = end
        return self.grants

    def until(self, session: Any, workspace: str) -> Grants:
        """The grants of ``session`` in ``workspace`` as its log stands now, folded only
        when one is looked for: most calls are decided by a verdict the policy kept,
        which no grant made, and then the log is not read at all."""
        return Grants(self, session, len(session.events), workspace)


class Grants:
    """The grants of the first ``end`` events of a session that hold in ``workspace``
    (see ``GrantLog.until``). A plain slotted class: one is made per checked call, and
    a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``."""

    __slots__ = ("end", "log", "session", "workspace")

    def __init__(self, log: GrantLog, session: object, end: int, workspace: str) -> None:
        self.log = log
        self.session = session
        self.end = end
        self.workspace = workspace

    def __contains__(self, grant: object) -> bool:
        if not isinstance(grant, tuple):
            return False
        return (*grant, self.workspace) in self.log.current(self.session, self.end)


def _grant(item: object) -> tuple[str, str, str, str] | None:
    """An entry of ``remember``; None when it is damaged or names no workspace (an
    entry logged before grants held per workspace: asked about again)."""
    if not isinstance(item, dict):
        return None
    values = (item.get("tool"), item.get("kind"), item.get("value"), item.get("workspace"))
    if not all(isinstance(v, str) for v in values):
        return None
    return (str(values[0]), str(values[1]), str(values[2]), str(values[3]))
