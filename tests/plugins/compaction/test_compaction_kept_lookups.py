"""The compaction check keeps, per agent, the harness's ``compaction:`` section (by the
config object) and the model it found (by registry and name), so a request does not
look them up again; what they are made of changing must still be seen."""

from __future__ import annotations

import dataclasses

import pytest
from compaction_util import harness, summarizer

from dsh.testing import ScriptedModel
from dsh_compaction import CompactionSettings
from dsh_compaction._state import state_for

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
    plugin registers it (a miss is not kept)."""
    small = ScriptedModel([], name="small", context_window=1_000)
    big = ScriptedModel([], name="big", context_window=50_000)
    async with harness(small, big) as h:
        agent = await h.agents.create("a", options={"model": "small"})
        state = state_for(agent.agent)
        assert state.model(agent.agent, None) is small
        assert state.model(agent.agent, None) is small  # the kept one
        agent.options["model"] = "big"
        assert state.model(agent.agent, None) is big
        assert state.model(agent.agent, "small") is small  # the request's own model

        assert state.model(agent.agent, "late") is None
        late = ScriptedModel([], name="late", context_window=7_000)
        h.models.add("test", late)
        assert state.model(agent.agent, "late") is late
