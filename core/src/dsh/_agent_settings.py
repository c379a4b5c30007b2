"""A plugin's settings for one agent: its options for the plugin laid key by key over
the plugin's section of ``dsh.yml``, as one validated instance of the settings model
the plugin registered (``dsh.config.agent_settings``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from dsh._config_keys import layered
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.agent import Agent

__all__ = ["agent_settings"]


def agent_settings(agent: Agent | None, name: str) -> Any:
    """Plugin ``name``'s settings for ``agent``: the mapping under ``name`` in the
    agent's options (``agents[].options.NAME`` or ``options=`` given in code) laid key by
    key over the plugin's section of dsh.yml (an agent's key replaces the section's),
    validated by the model the plugin registered (``register_settings``): an instance of
    it, its ``SecretStr`` fields as such. The section's own instance when the options
    give nothing; the plugin's settings object itself when the options hold one; None
    when neither gives any. ``DshError`` when ``agent`` is None (a test's placeholder) or
    has no harness, no plugin registers settings under ``name``, or the options do not
    validate: pydantic's validation context is ``{"harness": ..., "agent_id": ...}``
    here, as for options given when the agent was created, while a resumed session's
    stored options were checked without it, so a validator that checks names against
    the harness runs here first for those. It validates again on each call with options
    (a few microseconds): call it once per turn, not per chunk."""
    if agent is None:
        raise DshError(
            f"agent_settings(None, {name!r}): the agent is None (the placeholder of a test "
            "calling a hook through dsh_pm.relay?), so there are no settings to read: test "
            "an impl that reads settings in an agent's turn, with dsh.testing's "
            "scripted_harness (docs/testing.md)"
        )
    harness = getattr(agent, "harness", None)  # a stand-in agent may have none
    if harness is None:
        which = getattr(agent, "id", agent)  # a stand-in may have no id either
        raise DshError(f"agent {which!r} has no harness: no settings to read")
    model = harness.settings.get(name)
    if model is None:
        raise DshError(f"no loaded plugin registers settings under {name!r}")
    config = harness.config
    options = agent.options.get(name) if isinstance(agent.options, Mapping) else None
    if options is None:
        return config.section(name)
    if isinstance(options, BaseModel) and issubclass(model, type(options)):
        return options  # the plugin's own settings object (its model or a base), as given
    context = {"harness": harness, "agent_id": agent.id}
    try:
        return model.model_validate(layered(config.raw.get(name), options), context=context)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(map(str, (name, *error["loc"])))
        raise DshError(f"agent {agent.id!r}: option {where}: {error['msg']}") from exc
