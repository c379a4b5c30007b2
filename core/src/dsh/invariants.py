"""The log invariants every session must keep, which any test can check any log with
(``check_invariants``), and the synthetic events that restore them to a log cut off in
the middle of its last turn (``close_turn``): a persistence backend's ``load`` closes
such a turn with them, and the core with the same ones when a backend did not."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dsh.messages import STOP_REASONS, AssistantMessage, TextBlock, Usage
from dsh.session import EVENT_TYPES, SessionEvent

__all__ = [
    "END_REASONS",
    "INTERRUPTED",
    "NOT_STARTED",
    "OUTCOME_UNKNOWN",
    "check_invariants",
    "close_turn",
]

OUTCOME_UNKNOWN = (
    "outcome unknown: the session was interrupted after this call started; it may or "
    "may not have taken effect"
)
NOT_STARTED = "not run: the session was interrupted before this call was recorded as started"
INTERRUPTED = "the session ended before this turn finished (a crash or a kill); closed on load"

END_REASONS = frozenset({"completed", "max-tokens", "aborted", "error", "disposed", "interrupted"})
_STEP_ONLY = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result"})
_CORE_TYPES = frozenset(EVENT_TYPES)
_A: Mapping[type, str] = {int: "an int", str: "a str", bool: "a bool", dict: "a dict"}
#: The fields each core event's data must hold, and their types (``int``: not a bool).
_FIELDS: Mapping[str, tuple[tuple[str, type], ...]] = {
    "turn/start": (("turn", int),),
    "turn/end": (("turn", int),),
    "step/start": (("step", int),),
    "user/message": (("content", str),),
    "steering/message": (("content", str),),
    "assistant/message": (("message", dict),),
    "tool/call": (("id", str), ("name", str)),
    "tool/result": (("call_id", str), ("name", str), ("content", str), ("is_error", bool)),
}


def check_invariants(
    events: Iterable[SessionEvent | Mapping[str, Any]], *, complete: bool = True
) -> list[str]:
    """Every violation found, as readable lines (empty: the log is sound).

    Checks: seq equals index; turns open and close in order, numbered consecutively;
    steps numbered from 1 within each turn; step events only inside a step; every
    tool/result follows its tool/call, and every call has exactly one result before its
    step ends (a call of an answer too: it has its tool/call); no call id is repeated
    within a step (in an answer or its tool/calls); turn/end carries a known reason;
    the data of each core event is a dict with the fields its type needs, of their
    types (an answer's stop reason one dsh knows).
    """
    problems: list[str] = []
    turn: int | None = None
    last_turn: int | None = None
    step: int | None = None
    last_step = 0
    open_calls: set[str] = set()
    step_calls: set[str] = set()  # ids of the open step's tool/calls
    answer_calls: list[str] = []  # ids of the tool calls of the open step's answers
    for index, raw in enumerate(events):
        event = raw if isinstance(raw, SessionEvent) else SessionEvent.from_dict(raw)
        kind, data = event.type, event.data
        where = f"seq {event.seq} ({kind})"

        def bad(message: str, where: str = where) -> None:
            problems.append(f"{where}: {message}")

        if event.seq != index:
            bad(f"seq should be {index}")
        if kind in _CORE_TYPES:
            malformed = _malformed(kind, data)
            if malformed is not None:  # nothing more is read from it
                bad(malformed)
                continue
        if kind == "turn/start":
            if turn is not None:
                bad(f"turn {turn} is still open")
            number = data.get("turn")
            if last_turn is not None and number != last_turn + 1:
                bad(f"turn {number} follows turn {last_turn}")
            turn = last_turn = number
            step, last_step = None, 0
        elif kind == "turn/end":
            if turn is None:
                bad("no turn is open")
            elif data.get("turn") != turn:
                bad(f"closes turn {data.get('turn')} but turn {turn} is open")
            if step is not None:
                bad(f"step {step} is still open")
            if open_calls:  # said here, not blamed on the next turn's step
                bad(f"tool calls without a result: {sorted(open_calls)}")
                open_calls.clear()
            if data.get("reason") not in END_REASONS:
                bad(f"unknown reason {data.get('reason')!r}")
            turn, step = None, None
        elif kind == "step/start":
            if turn is None:
                bad("outside a turn")
            if step is not None:
                bad(f"step {step} is still open")
            if data.get("step") != last_step + 1 or data.get("turn") != turn:
                bad(f"step {data.get('step')} of turn {data.get('turn')} after step {last_step}")
            step = last_step = data["step"]
            step_calls.clear()
            answer_calls.clear()
        elif kind == "step/end":
            if step is None or data.get("step") != step:
                bad(f"closes step {data.get('step')} but the open step is {step}")
            elif data.get("turn", turn) != turn:
                bad(f"closes step {step} of turn {data.get('turn')} but turn {turn} is open")
            if open_calls:
                bad(f"tool calls without a result: {sorted(open_calls)}")
            uncalled = [call_id for call_id in answer_calls if call_id not in step_calls]
            if uncalled:
                bad(f"tool calls of the answer without a tool/call and result: {uncalled}")
            open_calls.clear()
            answer_calls.clear()
            step = None
        elif kind in _STEP_ONLY:
            if step is None:
                bad("outside a step")
            if kind == "tool/call":
                if data.get("id") in open_calls:
                    bad(f"call {data.get('id')!r} logged twice")
                elif data.get("id") in step_calls:
                    bad(f"call {data.get('id')!r} repeated in step {step}")
                open_calls.add(data.get("id", ""))
                step_calls.add(data.get("id", ""))
            elif kind == "assistant/message":
                for repeated in _repeated_ids(data, answer_calls):
                    bad(f"call {repeated!r} repeated")
            elif kind == "tool/result":
                if data.get("call_id") not in open_calls:
                    bad(f"result for {data.get('call_id')!r} without an open tool/call")
                open_calls.discard(data.get("call_id", ""))
        elif kind in ("user/message", "steering/message") and turn is None:
            bad("outside a turn")
    if complete and turn is not None:
        still = f", step {step} open" if step is not None else ""
        calls = f", calls without a result: {sorted(open_calls)}" if open_calls else ""
        problems.append(f"end of log: turn {turn} is still open{still}{calls}")
    return problems


def _malformed(kind: str, data: Any) -> str | None:
    """What is wrong with the data of a core event of type ``kind``, if anything: not
    a dict, a field its type needs missing or of the wrong type (a turn or step number
    below 1, an answer's content not a list or its stop reason unknown)."""
    if not isinstance(data, Mapping):
        return f"data is a {type(data).__name__}, not a dict"
    for field, kind_of in _FIELDS.get(kind, ()):
        value = data.get(field)
        if type(value) is not kind_of and not (kind_of is dict and isinstance(value, Mapping)):
            return f"{field} is {value!r:.60}, not {_A[kind_of]}"
        if isinstance(value, int) and kind_of is int and value < 1:
            return f"{field} is {value}, not a number from 1"
    if kind == "assistant/message":
        message = data["message"]
        if not isinstance(message.get("content", []), list | tuple):
            return f"message.content is {message.get('content')!r:.60}, not a list"
        if message.get("stop_reason", "stop") not in STOP_REASONS:
            return f"message.stop_reason {message.get('stop_reason')!r:.60} is not one dsh knows"
    return None


def _repeated_ids(data: Mapping[str, Any], ids: list[str]) -> list[str]:
    """The tool call ids an ``assistant/message`` holds more than once; each id it holds
    is added to ``ids``."""
    message = data.get("message")
    blocks = message.get("content") if isinstance(message, Mapping) else None
    seen: set[str] = set()
    repeated: list[str] = []
    for block in blocks if isinstance(blocks, list | tuple) else ():
        if isinstance(block, Mapping) and block.get("type") == "tool_call":
            call_id = str(block.get("id"))
            if call_id in seen and call_id not in repeated:
                repeated.append(call_id)
            elif call_id not in seen:
                ids.append(call_id)
            seen.add(call_id)
    return repeated


def close_turn(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """The synthetic events that close a turn left open at the end of ``events``.

    The text of an answer cut off mid-stream (``assistant/chunk`` events and no
    ``assistant/message`` yet) as an ``assistant/message`` with stop reason ``error``,
    as a live abort keeps it (its text blocks only); an error ``tool/result`` for every
    call of the open step that has none (a call
    whose ``tool/call`` was logged may have run: its outcome is unknown; one that was
    not logged gets its ``tool/call`` first), then ``step/end`` if a step is open, then
    ``turn/end`` with reason ``interrupted``. Times are the last event's, so loading
    the same log twice gives the same events.
    """
    start = _open_turn(events)
    if start is None:
        return []
    turn = events[start].data.get("turn")
    step: Any = None
    calls: dict[str, list[Any]] = {}  # id -> [name, arguments, logged]
    usage: dict[str, int] = Usage().model_dump()
    texts: list[str] = []  # the text blocks streamed since the step's last answer
    joins = False  # the last block streamed is text: a text chunk continues it
    for event in events[start + 1 :]:
        kind, data = event.type, event.data
        if kind == "assistant/chunk":
            said = data.get("kind")
            if said == "text" and type(text := data.get("text")) is str:
                if joins:
                    texts[-1] += text
                else:
                    texts.append(text)
                joins = True
            elif said in ("tool_call", "reasoning", "provider_block"):
                joins = False
            continue
        texts, joins = [], False
        if kind == "step/start":
            step, calls = data.get("step"), {}
        elif kind == "step/end":
            step, calls = None, {}
        elif kind == "assistant/message":
            message = data.get("message") or {}
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_call":
                    calls.setdefault(str(block.get("id")), [block.get("name"), "", False])
                    calls[str(block.get("id"))][1] = block.get("arguments", "{}")
            for key, value in (message.get("usage") or {}).items():
                if type(value) is int:
                    usage[key] = usage.get(key, 0) + value
        elif kind == "tool/call":
            entry = calls.setdefault(str(data.get("id")), [data.get("name"), "", False])
            entry[1], entry[2] = data.get("arguments", entry[1]), True
        elif kind == "tool/result":
            calls.pop(str(data.get("call_id")), None)
    closers: list[SessionEvent] = []
    when = events[-1].time

    def close(kind: str, data: dict[str, Any]) -> None:
        closers.append(SessionEvent(kind, len(events) + len(closers), when, data))

    if step is not None and any(text.strip() for text in texts):  # cut off mid-stream
        from dsh.llm.assemble import _paired  # lazily: its imports are the loop's

        blocks = tuple(TextBlock(type="text", text=_paired(text)) for text in texts)
        cut = AssistantMessage(role="assistant", content=blocks, stop_reason="error")
        close("assistant/message", {"message": cut.to_data()})
    for call_id, (name, arguments, logged) in calls.items():
        if not logged:
            close("tool/call", {"id": call_id, "name": name, "arguments": arguments})
        content = OUTCOME_UNKNOWN if logged else NOT_STARTED
        close(
            "tool/result",
            {"call_id": call_id, "name": name, "content": content, "is_error": True},
        )
    if step is not None:
        close("step/end", {"turn": turn, "step": step})
    error = {"code": "INTERRUPTED", "message": INTERRUPTED}
    close("turn/end", {"turn": turn, "reason": "interrupted", "usage": usage, "error": error})
    return closers


def _open_turn(events: Sequence[SessionEvent]) -> int | None:
    """The index of the ``turn/start`` of a turn still open at the end, if any."""
    for index in range(len(events) - 1, -1, -1):
        kind = events[index].type
        if kind == "turn/end":
            return None
        if kind == "turn/start":
            return index
    return None
