"""What ``accept-edits`` does not cover inside the workspace: the config file that holds
the rules, and the session store. An agent that could write the first would rewrite the
rules that bind it; one that could write the second would forge "always" answers, which
are read back from the session log on ``--continue``. Editing either is asked about.
"""

from __future__ import annotations

import os
from typing import Any

from dsh.persistence import in_store, store_location

__all__ = ["config_file", "guarded", "session_store"]


def config_file(agent: Any) -> frozenset[str]:
    """The real path of the config file the agent's harness loaded (if it is a file)."""
    source = getattr(getattr(getattr(agent, "harness", None), "config", None), "source", None)
    is_file = isinstance(source, str) and os.path.isfile(source)
    return frozenset({os.path.realpath(str(source))} if is_file else ())


async def session_store(agent: Any) -> str | None:
    """The real path of the session store of the agent's harness: the ``location`` of
    the service a persistence plugin gives (``dsh.persistence.store_location``). None
    when no plugin gives a service, or its service gives no location. A service that
    gives a location that is not a path raises (the check then fails closed)."""
    relay = getattr(getattr(agent, "harness", None), "relay", None)
    if relay is None:
        return None
    return store_location(await relay.session_persistence())


def guarded(
    readings: tuple[str, ...], directory: bool, config: frozenset[str], store: str | None
) -> str | None:
    """Why ``accept-edits`` does not cover a path (its real ``readings``; ``directory``:
    one of them is a directory, which the tool may change what is in), or None."""
    found = next((p for p in readings if p in config), None)
    if found is not None:
        return f"{found}, the config file that holds the rules"
    if store is None:
        return None
    for reading in readings:
        holds = directory and store.startswith(reading.rstrip(os.sep) + os.sep)
        if holds or in_store(store, reading):
            return (
                f"{store}, the session store (its logs hold the answers 'always' gave, "
                "read back on --continue)"
            )
    return None
