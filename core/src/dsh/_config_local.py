"""``local`` in a plugin's ``ModelName`` setting in ``dsh.yml`` (``compaction.model:
local``), checked when a program or the dsh command creates an agent: the file is
accepted at load, since the bundled model runs whenever an agent's model is ``local``
(the dsh command's ``start_local`` registers it as ``local`` before it creates its
agent, and the plugin finds it by name). Unregistered then, nothing would start it,
and the plugin's first call would fail: refused, naming the agent and the file's key.
The agents the file lists, started with the harness, are not checked (the command may
start the bundled model after them: ``dsh run -m local``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from dsh._config_cross import set_model_names
from dsh._config_yaml import Loc, format_path
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness

__all__ = ["check_local"]

LOCAL_UNREGISTERED = (
    "'local' (the bundled model) is not registered: nothing starts the bundled model for "
    "it unless an agent's model is local or models: defines local; omit the setting to "
    "use the agent's model"
)


def check_local(harness: Harness, agent_id: str, options: Mapping[str, Any] | None) -> None:
    """A ``DshError`` naming agent ``agent_id`` (being created) and the key of
    ``dsh.yml`` that sets a plugin's setting to ``local`` for it, when no model of that
    name is registered: a section's setting its ``options`` do not replace. The agents
    ``dsh.yml`` lists, started with the harness, are not checked: the dsh command starts
    the bundled model after the harness, then creates its agent (checked then)."""
    if "local" in harness.models.names():
        return
    options = options or {}
    for name in harness.settings:
        given = options.get(name)
        if isinstance(given, BaseModel):  # a settings object given whole: no section under
            continue
        mine = given if isinstance(given, Mapping) else {}
        section = harness.config.sections.get(name)
        if section is not None:
            for loc, model in set_model_names(section):
                if model == "local" and loc[0] not in mine:
                    _refuse(harness, agent_id, (name, *loc))


def _refuse(harness: Harness, agent_id: str, loc: Loc) -> None:
    where = harness.config.where(*loc)
    raise DshError(f"agent {agent_id!r}: {where}: {format_path(loc)}: {LOCAL_UNREGISTERED}")
