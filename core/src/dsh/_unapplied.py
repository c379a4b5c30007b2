"""Events of a resumed session that no history reducer folds now, though a plugin's did
when they were logged: a session compacted by dsh-compaction (``compact/summary``,
``compact/prune``) resumed with that plugin off or not installed gets its whole history
back, and the next request may be far over the model's context window. The log keeps
them (resumed with the plugin, they apply again); a warning, once per resume, names the
plugin, what the history now lacks and what turns the plugin on.

Which types a plugin folds only that plugin says (``register_history_reducers``), and
a plugin that is not loaded says nothing: so this knows those of dsh's own plugins
(``OWN_PLUGINS``' ``folds``). A plugin's events that fold into no history (dsh-
permissions' decisions, ``compact/start``) are not warned of."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from dsh._secrets import get_logger

if TYPE_CHECKING:
    from dsh.plugins import PluginManager
    from dsh.session import SessionEvent

__all__ = ["unapplied", "warn_unapplied"]

log = get_logger(__name__)


def unapplied(
    session_id: str,
    events: Sequence[SessionEvent],
    reducers: Collection[str],
    pm: PluginManager | None = None,
) -> list[str]:
    """What to warn of for session ``session_id`` resumed from ``events`` with history
    reducers for the types ``reducers``: a line per plugin of dsh's whose reducers folded
    some of them and none folds now; how to turn it on asked of ``pm`` (None: not said)."""
    from dsh._entry_points import OWN_PLUGINS

    folded = {kind: name for name, own in OWN_PLUGINS.items() for kind in own.folds}
    missed = Counter(e.type for e in events if e.type in folded and e.type not in reducers)
    lines = []
    for name, own in OWN_PLUGINS.items():
        counts = [(kind, missed[kind]) for kind in own.folds if missed[kind]]
        if not counts:
            continue
        held = " and ".join(f"{n} {kind} event{'s' if n > 1 else ''}" for kind, n in counts)
        lines.append(
            f"session {session_id} holds {held} of plugin {name!r} ({own.distribution}), "
            f"{_state(pm, name)}: {own.unfolded}{_how(pm, name, own.distribution)}"
        )
    return lines


def warn_unapplied(
    session_id: str,
    events: Sequence[SessionEvent],
    reducers: Collection[str],
    pm: PluginManager | None = None,
) -> None:
    """Log ``unapplied``'s lines as warnings."""
    for line in unapplied(session_id, events, reducers, pm):
        log.warning("%s", line)


def _state(pm: PluginManager | None, name: str) -> str:
    if pm is not None and pm.get_plugin(name) is not None:
        return "which is loaded but folds none of them into the history"
    return "which is not loaded"


def _how(pm: PluginManager | None, name: str, distribution: str) -> str:
    """What turns plugin ``name`` on, after "; "; "" when ``pm`` cannot tell."""
    if pm is None or pm.get_plugin(name) is not None:
        return ""
    purpose = " to resume the session as it was"
    if pm.is_missing(name):
        return f"; {distribution} is not installed: install it{purpose}"
    from dsh._plugin_off import why_off

    return "; " + why_off(pm, name, distribution, purpose=purpose)
