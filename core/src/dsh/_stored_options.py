"""The options a session was stored with, in the check of the options of an agent that
resumes it. They are stored as given, those for a plugin turned off (``-p no:NAME``)
too, which nothing could check then: once the plugin runs again, a bad one refuses the
session. The refusal says the options are the session's (``dsh.yml``, which ``config
check`` passes, does not set them) and how to go on: the config's own options for the
agent that created the session replace the stored ones (``_cli_agent.resume_options``);
for a resume in code that gave no options (and so took the stored ones whole),
``options=`` does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh._options import CORE_OPTIONS

if TYPE_CHECKING:
    from dsh.config import Config
    from dsh.persistence import StoredSession

__all__ = ["creator", "from_store", "stored_note"]


def creator(stored: StoredSession) -> str | None:
    """The id of the agent that created ``stored`` (its meta says; an older session's
    id begins with it); None when neither tells."""
    agent = stored.meta.get("agent")
    if isinstance(agent, str):
        return agent
    if "-session-" in stored.id:
        return stored.id.partition("-session-")[0]
    return None


def from_store(config: Config, stored: StoredSession | None, key: str, value: Any) -> bool:
    """Whether option ``key`` (``value``) is the one ``stored`` holds, which the config
    does not set for the agent that created it."""
    if stored is None:
        return False
    kept = stored.meta.get("options")
    if not isinstance(kept, dict) or key not in kept or kept[key] != value:
        return False
    agent = creator(stored)
    return all(key not in entry.own_options() for entry in config.agents if entry.id == agent)


def stored_note(
    config: Config,
    stored: StoredSession,
    key: str,
    *,
    off: str | None,
    kept: str | None = None,
) -> str:
    """Said after the problem of option ``key`` that ``from_store`` found in ``stored``:
    whose options they are and the way out. ``off``: its plugin does not run, "left out"
    (installed, not loaded: load it) or "not installed" (install dsh-KEY), or turn it
    off to go on without them; None: dsh.yml's options for the creating agent would
    replace them (``resume_options``). ``kept``: they were taken whole by a resume in
    code given no options, from session ``kept`` (``stored``, or a fork's source), and
    ``options=`` replaces them."""
    what = "option" if key in CORE_OPTIONS else "options"  # a plugin's: its settings
    said = f"the {key!r} {what} stored with session {kept or stored.id}"
    if kept is not None:
        if off is None:
            return f" ({said}: passing options= replaces the stored ones)"
        load = "load it, or " if off == "left out" else ""
        return f" ({said}: {load}pass options= without them)"
    if off == "left out":
        load = f"load it (DSH_LOAD_PLUGINS, -p {key})"
        return f" ({said}: {load}, or turn it off (-p no:{key}) to go on without them)"
    if off is not None:  # "install dsh-KEY" said already
        return f" ({said}: -p no:{key} goes on without them)"
    named = not config.source.startswith("<")  # <defaults>, <string>: no file to name
    where = f"in {config.source}" if named else "in the configuration"
    there = " there" if named else " in dsh.yml"
    agent = creator(stored)
    if agent is None:  # no entry of dsh.yml applies to it
        return f" ({said}, not set {where}; -p no:{key} goes on without them)"
    for index, entry in enumerate(config.agents):
        if entry.id == agent:
            way = f"setting agents[{index}].options.{key}{there} replaces them"
            break
    else:
        way = f"an agent {agent!r} under agents:{there} with options.{key} replaces them"
    return f" ({said}, not set {where}; {way})"
