"""The compaction check keeps, per agent, the harness's ``compaction:`` section (by the
config object) and the model it found (by registry and name), so a request does not
look them up again; what they are made of changing must still be seen."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from typing import Any

import pytest
from compaction_util import harness, summarizer

from dsh.testing import ScriptedModel
from dsh_compaction import CompactionSettings, _host
from dsh_compaction._check import kept_check, new_check
from dsh_compaction._state import _states, state_for

pytestmark = pytest.mark.plugins("compaction")

SECTION = "compaction:\n  threshold: 0.5\n"


async def test_a_new_config_is_seen_by_the_next_request() -> None:
    """A harness that loads another config (a new ``Config`` object) gives the agent
    the new section's settings; the kept section is not served from the old one."""
    async with harness(ScriptedModel([]), summarizer(), config_text=SECTION) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        state = state_for(agent.agent)
        assert state.settings(agent.agent).threshold == 0.5
        assert state.settings(agent.agent).threshold == 0.5  # the kept one
        name = next(n for n, m in h.settings.items() if m is CompactionSettings)
        sections = {**h.config.sections, name: CompactionSettings(threshold=0.7)}
        h._config = dataclasses.replace(h.config, sections=sections)  # a reload

        assert state.settings(agent.agent).threshold == 0.7


async def test_the_agent_option_still_overrides_the_kept_section() -> None:
    async with harness(ScriptedModel([]), summarizer(), config_text=SECTION) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        state = state_for(agent.agent)
        assert state.settings(agent.agent).threshold == 0.5
        agent.options["compaction"] = {"threshold": 0.9}

        assert state.settings(agent.agent).threshold == 0.9


async def test_a_switched_model_and_a_model_registered_later_are_found() -> None:
    """The kept model is the one of the name asked for: the agent's model switched
    (option ``model``) finds the other; a name not registered yet is found once a
    plugin registers it (a miss is not kept). The harness registers a model that is
    no HttpModel wrapped (``__wrapped__``: dsh.llm.registry, which hides its secrets)."""
    small = ScriptedModel([], name="small", context_window=1_000)
    big = ScriptedModel([], name="big", context_window=50_000)
    async with harness(small, big) as h:
        agent = await h.agents.create("a", options={"model": "small"})
        state = state_for(agent.agent)
        assert registered(state.model(agent.agent, None)) is small
        assert registered(state.model(agent.agent, None)) is small  # the kept one
        agent.options["model"] = "big"
        assert registered(state.model(agent.agent, None)) is big
        assert registered(state.model(agent.agent, "small")) is small  # the request's own model

        assert state.model(agent.agent, "late") is None
        late = ScriptedModel([], name="late", context_window=7_000)
        h.models.add("test", late)
        assert registered(state.model(agent.agent, "late")) is late


def registered(model: Any) -> Any:
    """The object a plugin registered (the harness's registry wraps it)."""
    return getattr(model, "__wrapped__", model)


# --- the threshold check's kept values (_check): each thing they derive from changing is
# seen by the next request


def changes(h: Any, agent: Any, model: ScriptedModel) -> dict[str, Callable[[Any], Any]]:
    """What may change between two requests; each returns the request to check next."""

    def config(request: Any) -> Any:
        h._config = dataclasses.replace(h.config)  # a reload: another Config object
        return request

    def option(key: str, value: Any) -> Callable[[Any], Any]:
        def change(request: Any) -> Any:
            agent.options[key] = value
            return request

        return change

    def window(request: Any) -> Any:
        model.context_window = 2_000
        return request

    return {
        "config": config,
        "compaction option": option("compaction", {"threshold": 0.5}),
        "model option": option("model", "other"),
        "max_tokens": lambda request: request.model_copy(update={"max_tokens": 100}),
        "request model": lambda request: request.model_copy(update={"model": "other"}),
        "model info": window,
    }


@pytest.mark.parametrize(
    "change",
    ["config", "compaction option", "model option", "max_tokens", "request model", "model info"],
)
async def test_the_kept_check_is_derived_again_when_what_it_came_from_changes(
    change: str,
) -> None:
    model = ScriptedModel([], context_window=50_000)
    other = ScriptedModel([], name="other", context_window=9_000)
    async with harness(model, other, summarizer()) as h:
        handle = await h.agents.create("a", options={"model": "scripted"})
        agent = handle.agent
        state = state_for(agent)
        request = _host.base_request(agent).model_copy(update={"model": None})
        check = new_check(agent, state, request)
        assert kept_check(agent, state, request) is check
        before = (check.settings, check.window, check.reserve, check.limit)

        request = changes(h, agent, model)[change](request)

        assert kept_check(agent, state, request) is None
        again = new_check(agent, state, request)
        if change != "config":  # the same section again
            assert (again.settings, again.window, again.reserve, again.limit) != before


async def test_a_model_not_found_keeps_no_check() -> None:
    async with harness(ScriptedModel([])) as h:
        handle = await h.agents.create("a", options={"model": "scripted"})
        agent = handle.agent
        state = state_for(agent)
        request = _host.base_request(agent).model_copy(update={"model": "late"})

        new_check(agent, state, request)

        assert kept_check(agent, state, request) is None  # a plugin may register it later


def test_a_state_is_dropped_with_its_agent() -> None:
    class Agent:
        pass

    agent = Agent()
    state_for(agent)
    key = id(agent)
    assert key in _states
    del agent
    gc.collect()

    assert key not in _states
