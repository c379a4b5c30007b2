"""The ``agents:`` of dsh.yml whose sessions the JSONL backend could not name: checked
as a harness starts, at the id's line, rather than at the agent's first claim."""

from __future__ import annotations

from typing import Any

from dsh_persistence._errors import PersistenceError
from dsh_persistence._files import MAX_NAME, name_length

__all__ = ["check_agent_ids"]

#: What the core adds to an agent's id to name its new sessions: ``-session-<uuid hex>``.
_SESSION_PART = len("-session-") + 32
#: The longest agent id (bytes, once encoded for a file name) the JSONL backend can name.
LONGEST_ID = MAX_NAME - _SESSION_PART


def check_agent_ids(config: Any) -> None:
    """A PersistenceError naming the place in dsh.yml of the first of ``config.agents``
    whose id makes session file names longer than the JSONL backend's."""
    for i, agent in enumerate(config.agents):
        size = name_length(agent.id)
        if size > LONGEST_ID:
            raise PersistenceError(
                f"{config.where('agents', i, 'id')}: agents[{i}].id: too long for a session "
                f"file name of the jsonl backend ({size} bytes once encoded; at most "
                f"{LONGEST_ID}, as its sessions are <id>-session-<32 hex digits>)"
            )
