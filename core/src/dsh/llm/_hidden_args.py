"""A tool call that had a secret hidden from it is never run.

``dsh.llm._redact_answer.AnswerRedactor`` hides a secret dsh knows (a model API key) in
a tool call's arguments, id and name as ``***``, so that no event holds it. The call so
changed is not the one the model asked for, and may do something else altogether:
``***`` is a shell glob (``rm -f <key>`` would run as ``rm -f ***``: every file), and a
``write`` of ``KEY=<key>`` would write ``KEY=***`` without a word. So the step answers
such a call with ``NOT_RUN``, an error result, without running it or asking a plugin
(``tools_execute``, a permission question) whether it may. How it knows the call:

- the redactor yields each piece of the call, from the first that had a secret hidden
  on, as a ``HiddenArguments`` (a redactor around another passes the mark on), and the
  assembler notes the call (``Assembler.hidden_calls``);
- the redactor also notes that it hid one in the ``Guard`` the step puts in ``NOTED``
  (once in the agent's task; ``noted`` is cleared as each answer starts). An async
  generator runs in the context of the task that consumes it, so a plugin's model that
  wraps an HTTP model and makes new chunks of its chunks (which lose the mark) is seen
  too, unless it reads them in another task started before; then every call of that
  answer with ``***`` in it is refused too;
- when a call was hidden, only the calls of the answer as assembled, with the same id
  and arguments, run: one an ``agent_step_result`` hook changed or added is refused
  (``NOT_RUN_CHANGED``), so a hook that gives the calls ids of its own cannot run one;
- once a call of the agent was refused, a later call of its whose arguments hold
  ``***`` is refused (``NOT_RUN_STARS``): the model may repeat its call as its history
  shows it (a resumed session's too: its log is read for such a refusal when the agent
  is made). Until then a ``***`` the model writes itself is an argument like any other.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Final

from dsh._secrets import HIDDEN, redact
from dsh.llm.base import ToolCallDelta

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dsh.llm._redact_stream import StreamRedactor
    from dsh.messages import AssistantMessage, ToolCall
    from dsh.session import SessionEvent

__all__ = [
    "NOTED",
    "NOT_RUN",
    "NOT_RUN_CHANGED",
    "NOT_RUN_STARS",
    "Guard",
    "HiddenArguments",
    "call_piece",
    "marked",
    "note_hidden",
]

_NAME_IT: Final = (
    "refer to the secret by the name of the environment variable or file that holds it, "
    "or ask the user to put it in place (tools do not get the variables of dsh's secrets)"
)
NOT_RUN: Final = (
    "not run: the call held a secret that dsh keeps out of the conversation (an API "
    "key or a plugin's secret; the *** in it stands for it). *** is not the secret: do "
    "not repeat the call with ***. A tool call must not carry the secret's value: " + _NAME_IT
)
NOT_RUN_STARS: Final = (
    "not run: *** is not the secret: it stands for one dsh hid from an earlier call, "
    "which was not run, and no call with *** in its arguments runs after that. Do not "
    "repeat the call with ***: " + _NAME_IT
)
NOT_RUN_CHANGED: Final = (
    "not run: another call of this answer held a secret that dsh keeps out of the "
    "conversation (an API key or a plugin's secret), and a plugin changed the calls "
    "after the model made them, so this one cannot be told apart from it; make it again "
    "if it is needed"
)

#: How the refusals begin, and began (a log written by an earlier dsh is read too).
_REFUSALS: Final = (
    "not run: the arguments held a secret",
    "not run: the call held a secret",
    "not run: *** is not the key",
    "not run: *** is not the secret",
    "not run: another call of this answer held a secret",
)


class HiddenArguments(ToolCallDelta):
    """A piece of a tool call with a secret hidden from it, or one after such a piece:
    logged as any (``to_data``), but the call it belongs to is not run."""

    __slots__ = ()


class Guard:
    """The refusals of one agent's calls (kept by its step runner). ``noted``: a
    redactor hid a secret in a call of the answer streaming (``note_hidden``);
    ``clean``: after an answer with a call hidden, the calls of it that may run (id,
    arguments), else None; ``refused``: a call of the agent was refused."""

    __slots__ = ("clean", "noted", "refused")

    def __init__(self, events: Sequence[SessionEvent] = ()) -> None:
        """``events``: the session's log so far; a call refused in it (a resumed
        session: the model sees its ``***`` in its history) counts as refused."""
        self.noted = False
        self.clean: frozenset[tuple[str, str]] | None = None
        self.refused = any(
            event.type == "tool/result"
            and event.data.get("is_error") is True
            and str(event.data.get("content")).startswith(_REFUSALS)
            for event in events
        )

    def answered(self, message: AssistantMessage, hidden: frozenset[str]) -> None:
        """The assembled answer, with the ids of its marked calls (when ``hidden`` or
        ``noted``; else the step sets ``clean`` to None: every call may run)."""
        noted = self.noted
        self.clean = frozenset(
            (call.id, call.arguments)
            for call in message.tool_calls
            if call.id not in hidden
            and not (noted and HIDDEN in call.arguments + call.id + call.name)
        )

    def refusal(self, call: ToolCall) -> str | None:
        """Why ``call`` is not run, if it is not (only asked when ``clean`` is not None
        or ``refused``)."""
        clean = self.clean
        if clean is not None and (call.id, call.arguments) not in clean:
            self.refused = True
            return NOT_RUN if HIDDEN in call.arguments + call.id + call.name else NOT_RUN_CHANGED
        if self.refused and HIDDEN in call.arguments:
            return NOT_RUN_STARS
        return None


#: The guard of the agent whose task this is (set by its step runner), if any.
NOTED: Final[ContextVar[Guard | None]] = ContextVar("dsh_hidden_noted", default=None)


def note_hidden() -> None:
    """A redactor hid a secret in a tool call: the step streaming the answer (if any)
    refuses every call of it with ``***`` in its arguments."""
    guard = NOTED.get()
    if guard is not None:
        guard.noted = True


def marked() -> type[HiddenArguments]:
    """The kind of a call's piece from the first with a secret hidden on (noted)."""
    note_hidden()
    return HiddenArguments


def call_piece(
    chunk: ToolCallDelta, shown: str, arguments: StreamRedactor, secrets: tuple[str, ...]
) -> ToolCallDelta | None:
    """What ``AnswerRedactor`` shows for ``chunk``, a piece of a call whose arguments'
    redactor is ``arguments`` and showed ``shown`` of it: its id and name with
    ``secrets`` hidden too (``dsh._secrets.redact``: they come whole in a piece), a
    ``HiddenArguments`` once one was hidden in the call (``arguments.hid``) or marked so
    by a redactor before; ``chunk`` itself when nothing changes; None for nothing."""
    call_id, name = chunk.id, chunk.name
    if call_id is not None or name is not None:  # a call's first piece, usually
        call_id, name = _hidden(call_id, secrets), _hidden(name, secrets)
        if call_id is not chunk.id or name is not chunk.name:
            arguments.hid = True
    if isinstance(chunk, HiddenArguments):  # another redactor hid a secret in the call
        arguments.hid = True
    kind = marked() if arguments.hid else ToolCallDelta
    same = call_id is chunk.id and name is chunk.name
    if same and shown == chunk.arguments and isinstance(chunk, kind):
        return chunk
    if shown or call_id is not None or name is not None:
        return kind(chunk.index, call_id, name, shown)
    return None


def _hidden(value: str | None, secrets: tuple[str, ...]) -> str | None:
    """``value`` with ``secrets`` hidden; ``value`` itself when it holds none."""
    if value is None:
        return None
    hidden = redact(value, secrets)
    return value if hidden == value else hidden
