"""``compaction.model: local``: the bundled local model runs whenever an agent's model
is ``local`` (the dsh command's ``start_local`` registers it as ``local`` before it
creates its agent; the plugin finds it by name), so the file is accepted at load, and
the setting is checked when an agent is created (``dsh._config_local``): registered,
the summaries are written by it; not registered, the agent is refused, naming the file,
the line and ``compaction.model``, instead of the first compaction failing."""

from __future__ import annotations

import pytest
from compaction_util import events_of, harness, reads

from dsh import DshError
from dsh.testing import ScriptedModel, run_turn

pytestmark = pytest.mark.plugins("compaction")

TEXT = "compaction:\n  threshold: 0.5\n  model: local\n  prune_chars: 0\n"


async def test_local_as_the_summariser_works_once_local_is_registered() -> None:
    # `dsh run -m local` with this dsh.yml: start_local registers `local` after the
    # harness started, then the command creates its agent
    agent_model = ScriptedModel(reads(6), context_window=7000)
    async with harness(agent_model, config_text=TEXT) as h:
        local = ScriptedModel(["the summary"], name="local", context_window=1_000_000)
        h.models.add("local", local, "local")  # as start_local does
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "task")
    summaries = [e.data.get("model") for e in events_of(events, "compact/summary")]
    assert summaries and set(summaries) == {"local"}


async def test_local_as_the_summariser_is_refused_at_create_when_unregistered() -> None:
    async with harness(ScriptedModel([]), config_text=TEXT) as h:
        with pytest.raises(DshError) as info:
            await h.agents.create("a", options={"model": "scripted"})

    message = str(info.value)
    assert message.startswith("agent 'a': <string>:3:3: compaction.model: 'local'")
    assert "nothing starts the bundled model for it" in message
    assert "omit the setting to use the agent's model" in message


async def test_a_models_entry_named_local_is_accepted() -> None:
    # served by a plugin (the scripted models): `models:` declares it
    text = "models:\n  local: {provider: scripted}\ncompaction:\n  model: local\n"
    local = ScriptedModel([], name="local")

    async with harness(ScriptedModel([]), local, config_text=text) as h:
        assert h.config.section("compaction").model == "local"
        await h.agents.create("a", options={"model": "scripted"})
