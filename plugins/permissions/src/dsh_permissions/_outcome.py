"""What a decision becomes: the ``permission/decision`` event's data and the text the
model reads when a call is denied."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from dsh import ToolCall
from dsh_permissions._decide import Verdict

__all__ = ["EventData", "Outcome", "denial"]

_SHOWN: Final = 500


@dataclass(slots=True)
class Outcome:
    verdict: Verdict
    mode: str = "?"
    front_end: str | None = None
    answer: str | None = None
    remember: tuple[tuple[str, str], ...] = ()
    #: the workspace ``remember`` holds in (the policy's root)
    workspace: str = ""
    #: why a person was asked (None: nobody was)
    asked: str | None = None
    #: the call's arguments cannot be read (the tool would refuse them too)
    unreadable: bool = False


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


class EventData:
    """Makes the ``permission/decision`` event's data: JSON by construction (strings,
    ints, None and lists of them; ``Session.emit`` checks it all the same).

    A policy keeps its verdicts and gives the same object again for the same call, so
    the ``parts`` of the last verdict shown are kept instead of formatted again: the
    same dicts in each event's data, which ``Session.emit`` copies into the log (its
    copy is the walk that checks the data), so no event shares them."""

    __slots__ = ("_shown",)

    def __init__(self) -> None:
        #: (the verdict last shown, its parts as event data)
        self._shown: tuple[Verdict, tuple[dict[str, Any], ...]] | None = None

    def __call__(self, call: ToolCall, turn: int, step: int, outcome: Outcome) -> dict[str, Any]:
        verdict = outcome.verdict
        shown = self._shown
        if shown is None or shown[0] is not verdict:
            shown = self._shown = (verdict, _parts(verdict))
        return {
            "tool": call.name,
            "call_id": call.id,
            "turn": turn,
            "step": step,
            "decision": verdict.decision,
            "mode": outcome.mode,
            "rule": verdict.rule,
            "reason": verdict.reason,
            "asked": outcome.asked,
            "front_end": outcome.front_end,
            "answer": outcome.answer,
            "remember": [
                {"tool": call.name, "kind": k, "value": v, "workspace": outcome.workspace}
                for k, v in remember
            ]
            if (remember := outcome.remember)
            else [],
            "parts": list(shown[1]),  # emit copies the dicts into the log
        }


def _parts(verdict: Verdict) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "kind": p.subject.kind,
            "value": _clip(p.subject.value),
            "decision": p.decision,
            "by": p.by,
            "rule": None if p.rule is None else str(p.rule),
        }
        for p in verdict.parts
    )


def denial(call: ToolCall, outcome: Outcome) -> str:
    """What the model reads: what happened, why, and what to do instead."""
    verdict = outcome.verdict
    if outcome.unreadable:  # not a matter of permission: say what the executor would
        return (
            f"{call.name!r} was not run: {verdict.reason}. Call it again with arguments "
            "that fit its parameters."
        )
    if outcome.mode == "plan" and verdict.rule is None and not verdict.parts:
        advice = ""
    elif outcome.answer == "deny":
        advice = " Do not retry it; ask the user how to proceed."
    elif verdict.rule is not None and verdict.rule.startswith("deny:"):
        advice = " Do not try to get around the rule; do without this call or ask the user."
    else:
        advice = " Do not retry the same call; do without it or ask the user to allow it."
    return f"Permission denied: {call.name!r} was not run: {verdict.reason}.{advice}"
