"""The closers of a turn, which keep the log balanced, and the data of its events.

Every exit path of a turn, including an abort, a raising plugin, a model error or an
outer cancellation, ends with the closers (``StepRunner.run_turn``, ``dsh._steps``): the
answer cut off mid-stream, an error ``tool/result`` for every call that has none,
``step/end`` if a step is open, then ``turn/end``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dsh.errors import retry_seconds
from dsh.messages import ToolResult

if TYPE_CHECKING:
    from dsh._turn_state import TurnState
    from dsh.errors import ModelError
    from dsh.messages import StopReason, ToolCall

__all__ = ["call_data", "closers", "error_code", "model_error", "named", "result_data"]


def closers(turn: TurnState, error: dict[str, Any] | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events that close the turn, yielded one at a time so the bookkeeping
    between them happens after each is logged. All data is JSON by construction."""
    if turn.streaming is not None:
        assembler, model = turn.streaming
        turn.streaming = None
        reason: StopReason = "error" if turn.ended_by is None else "aborted"
        cut = assembler.cut_off(reason, model)
        if cut is not None:  # the model sees what it said before it was cut off
            turn.usage += cut.usage
            yield "assistant/message", {"message": cut.to_data()}
    how = "the turn ended" if turn.ended_by is None else f"the turn was {turn.ended_by}"
    for call in turn.pending:
        if call.id not in turn.logged:
            yield "tool/call", call_data(call)
        if call.id == turn.running:  # being handled: it may have run, in part or whole
            why = f"interrupted: {how} while this call was being handled; it may have run"
        else:
            why = f"not run: {how} before this call ran"
        result = ToolResult(call_id=call.id, content=why, is_error=True)
        yield "tool/result", result_data(call, result)
    turn.pending = []
    turn.running = None
    if turn.open_step is not None:
        yield "step/end", {"turn": turn.number, "step": turn.open_step}
        turn.open_step = None
    if turn.ended_by is not None:
        ended = turn.ended_by
    elif error is not None:
        ended = "error"
    else:
        ended = "max-tokens" if turn.max_tokens else "completed"
    data: dict[str, Any] = {
        "turn": turn.number,
        "reason": ended,
        "usage": turn.usage.to_data(),
    }
    if error is not None:
        data["error"] = error
    elif turn.stopped is not None:
        data["stopped"] = turn.stopped
    yield "turn/end", data


def named(message: str, turn: TurnState) -> str:
    """A model's error as the turn tells it: naming the model it streamed from (a
    plugin model's own error, the assembler's), unless it does already (a built-in
    adapter's). The error itself reaches the hooks as the model raised it."""
    if turn.streaming is None:
        return message
    who = f"model {turn.streaming[1]!r}"
    return message if message.startswith(who) else f"{who}: {message}"


def model_error(exc: ModelError, message: str) -> dict[str, Any]:
    """The ``turn/end`` error of a model's failure, JSON whatever a subclass set after
    ``ModelError.__init__`` checked it: a code that is not a str as its str, a wait
    that is not seconds left out."""
    error: dict[str, Any] = {"code": error_code(exc), "message": message}
    wait = retry_seconds(exc.retry_after)
    if wait is not None:  # the server's wait, for whoever tries again
        error["retry_after"] = wait
    return error


def error_code(exc: ModelError) -> str:
    """``exc.code``, as its str when a subclass set one that is not (after ``__init__``)."""
    return exc.code if isinstance(exc.code, str) else str(exc.code)


def call_data(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def result_data(call: ToolCall, result: ToolResult) -> dict[str, Any]:
    content, is_error = result.content, result.is_error
    return {"call_id": call.id, "name": call.name, "content": content, "is_error": is_error}
