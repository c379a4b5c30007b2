"""Where no one can be asked (stdin or stderr not a terminal: ``dsh run`` in a pipe, a
script, cron, or ``2>log``), the command line loads no ``tools_approval`` front end, and
dsh-permissions denies a call that needs a person's approval at once, telling the model
so. The person would learn of it from the log only: the first such denial of the run is
said on stderr, once, with the way out that fits (a rule in dsh.yml, a terminal).

Read from dsh-permissions' ``permission/decision`` event: a denial after asking
(``asked``) that no front end answered (``front_end`` and ``answer`` null). A plugin's
front end (``tools_approval``, ``permission_ask``) left unanswered until
``ask_timeout`` logs the same: with one loaded, nothing is said."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pluggy

from dsh._render import shorten
from dsh._visible import visible
from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = ["UnaskedWarning"]

_DECISION = "permission/decision"  # dsh-permissions' event (docs/permissions.md)
_FRONT_ENDS = ("tools_approval", "permission_ask")  # the core's hook, dsh-permissions' own


class UnaskedWarning:
    """Registered by ``dsh run`` and ``dsh chat`` in place of the terminal's front end
    when there is none: warns once, on stderr, of a call denied as no one could be
    asked. ``pm``: the command's plugins, looked at when a call is denied so (a plugin's
    front end, asking elsewhere, may have let ``ask_timeout`` run out)."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.warned = False
        self._pm = pm

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if self.warned or event.type != _DECISION or not _unasked(event.data):
            return
        if self._front_end_loaded():  # it was asked, and no answer came in time
            return
        self.warned = True
        data = event.data
        print(
            visible(
                f"dsh: warning: {_call(data)} needed a person's approval and was denied: "
                f"no one can be asked here (stdin or stderr is not a terminal); "
                f"{_advice(data)} (later denials like this one are not said)"
            ),
            file=sys.stderr,
            flush=True,
        )

    def _front_end_loaded(self) -> bool:
        for name in _FRONT_ENDS:
            caller = getattr(self._pm.hook, name, None)
            if isinstance(caller, pluggy.HookCaller) and any(
                impl.plugin is not self for impl in caller.get_hookimpls()
            ):
                return True
        return False


def _unasked(data: dict[str, Any]) -> bool:
    return (
        data.get("decision") == "deny"
        and data.get("asked") is not None
        and data.get("front_end") is None
        and data.get("answer") is None
    )


def _advice(data: dict[str, Any]) -> str:
    """The way out that fits why the call was asked about: a part no rule can allow (its
    words only known when it runs: ``by`` ``problem``, or the mode saying so), an ``ask``
    rule (``by`` ``rule``), else no ``allow`` rule covering it."""
    asked = _asked(data)
    if any(p.get("by") == "problem" for p in asked) or "so no rule can allow it" in str(
        data.get("asked")
    ):
        return "only a person at a terminal can allow it"
    rules = [str(p["rule"]) for p in asked if p.get("by") == "rule" and p.get("rule")]
    if rules:
        return f"the rule {rules[0]!r} asks: run dsh in a terminal, or remove that rule"
    return "allow such calls with a rule in dsh.yml (permissions: allow), or run dsh in a terminal"


def _asked(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of the call that needed asking (the tool's own among them)."""
    parts = data.get("parts")
    return [
        p
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and p.get("decision") == "ask"
    ]


def _call(data: dict[str, Any]) -> str:
    """``bash (command: git push)``: the tool and what of the call needed asking."""
    tool = str(data.get("tool"))
    asked = [p for p in _asked(data) if p.get("kind") != "tool"]
    if not asked:
        return repr(tool)
    first = asked[0]
    return f"{tool!r} ({first.get('kind')}: {shorten(str(first.get('value')), 60)})"
