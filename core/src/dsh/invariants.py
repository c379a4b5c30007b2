"""The log invariants every session must keep; any test can check any log with them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dsh.session import SessionEvent

__all__ = ["END_REASONS", "check_invariants"]

END_REASONS = frozenset({"completed", "max-tokens", "aborted", "error", "disposed", "interrupted"})
_STEP_ONLY = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result"})


def check_invariants(
    events: Iterable[SessionEvent | Mapping[str, Any]], *, complete: bool = True
) -> list[str]:
    """Every violation found, as readable lines (empty: the log is sound).

    Checks: seq equals index; turns open and close in order, numbered consecutively;
    steps numbered from 1 within each turn; step events only inside a step; every
    tool/result follows its tool/call, and every call has exactly one result before its
    step ends; turn/end carries a known reason.
    """
    problems: list[str] = []
    turn: int | None = None
    last_turn: int | None = None
    step: int | None = None
    last_step = 0
    open_calls: set[str] = set()
    for index, raw in enumerate(events):
        event = raw if isinstance(raw, SessionEvent) else SessionEvent.from_dict(raw)
        kind, data = event.type, event.data
        where = f"seq {event.seq} ({kind})"

        def bad(message: str, where: str = where) -> None:
            problems.append(f"{where}: {message}")

        if event.seq != index:
            bad(f"seq should be {index}")
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
            step = last_step = int(data.get("step") or 0)
        elif kind == "step/end":
            if step is None or data.get("step") != step:
                bad(f"closes step {data.get('step')} but the open step is {step}")
            if open_calls:
                bad(f"tool calls without a result: {sorted(open_calls)}")
            open_calls.clear()
            step = None
        elif kind in _STEP_ONLY:
            if step is None:
                bad("outside a step")
            if kind == "tool/call":
                if data.get("id") in open_calls:
                    bad(f"call {data.get('id')!r} logged twice")
                open_calls.add(data.get("id", ""))
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
