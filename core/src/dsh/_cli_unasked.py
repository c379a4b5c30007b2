"""Where no one can be asked (stdin or stderr not a terminal: ``dsh run`` in a pipe, a
script, cron, or ``2>log``), the command line loads no ``tools_approval`` front end, and
dsh-permissions denies a call that needs a person's approval at once, telling the model
so. The person would learn of it from the log only: the first such denial of the run is
said on stderr, once, with the ways out (a rule in dsh.yml, a terminal).

Read from dsh-permissions' ``permission/decision`` event: a denial after asking
(``asked``) that no front end answered (``front_end`` and ``answer`` null)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from dsh._render import shorten, visible
from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = ["UnaskedWarning"]

_DECISION = "permission/decision"  # dsh-permissions' event (docs/permissions.md)


class UnaskedWarning:
    """Registered by ``dsh run`` and ``dsh chat`` in place of the terminal's front end
    when there is none: warns once, on stderr, of a call denied as no one could be
    asked."""

    def __init__(self) -> None:
        self.warned = False

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if self.warned or event.type != _DECISION or not _unasked(event.data):
            return
        self.warned = True
        data = event.data
        print(
            visible(
                f"dsh: warning: {_call(data)} needed a person's approval and was denied: "
                "no one can be asked here (stdin or stderr is not a terminal); allow such "
                "calls with a rule in dsh.yml (permissions: allow), or run dsh in a "
                "terminal (later denials like this one are not said)"
            ),
            file=sys.stderr,
            flush=True,
        )


def _unasked(data: dict[str, Any]) -> bool:
    return (
        data.get("decision") == "deny"
        and data.get("asked") is not None
        and data.get("front_end") is None
        and data.get("answer") is None
    )


def _call(data: dict[str, Any]) -> str:
    """``bash (command: git push)``: the tool and what of the call needed asking."""
    tool = str(data.get("tool"))
    parts = data.get("parts")
    asked = [
        p
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and p.get("decision") == "ask" and p.get("kind") != "tool"
    ]
    if not asked:
        return repr(tool)
    first = asked[0]
    return f"{tool!r} ({first.get('kind')}: {shorten(str(first.get('value')), 60)})"
