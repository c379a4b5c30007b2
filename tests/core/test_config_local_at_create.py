"""``local`` in a plugin's ``ModelName`` setting in ``dsh.yml`` (``compaction.model:
local``): accepted at load, since the bundled model is running whenever an agent's model
is ``local`` (the dsh command's ``start_local`` registers it as ``local`` before it
creates its agent, and the plugin finds it by name at run time). Checked when an agent
is created or started from the file instead, against the models registered then: an
unregistered ``local`` is refused there, naming the agent and the file's key, not found
by the first compaction hours later. A resume is not refused for it (as stored options
naming a model not registered here are not)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from dsh import ConfigError, DshError, ModelName, hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


class Summaries(BaseModel):
    model: ModelName | None = None
    note: str = "not a model name"


class SummariesPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Summaries)


SECTION = "summaries:\n  model: local\n"
PLUGINS = [("summaries", SummariesPlugin())]


async def test_the_cli_run_m_local_case_is_accepted_once_local_is_registered() -> None:
    # `dsh run -m local` with a dsh.yml holding only `compaction: {model: local}`: the
    # harness starts, start_local registers the server as `local`, then the agent
    async with scripted_harness(plugins=PLUGINS, config_text=SECTION) as h:
        assert h.config.section("summaries").model == "local"
        h.models.add("local", ScriptedModel([], name="local"), "local")  # as start_local
        agent = await h.agents.create("main", options={"model": "local"})
        assert agent.agent.options["model"] == "local"


async def test_an_unregistered_local_is_refused_at_create_naming_the_key() -> None:
    async with scripted_harness(ScriptedModel([]), plugins=PLUGINS, config_text=SECTION) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(DshError):
            await h.agents.create("b")  # no options: the section applies still
    message = str(caught.value)
    assert message.startswith("agent 'a': <string>:2:3: summaries.model: 'local' ")
    assert "nothing starts the bundled model for it" in message
    assert "unless an agent's model is local or models: defines local" in message


async def test_options_that_set_the_model_themselves_replace_the_sections_local() -> None:
    models = ScriptedModel([]), ScriptedModel([], name="fast")
    async with scripted_harness(*models, plugins=PLUGINS, config_text=SECTION) as h:
        await h.agents.create("a", options={"model": "scripted", "summaries": {"model": "fast"}})


async def test_a_models_entry_named_local_is_registered_so_accepted() -> None:
    config = "models:\n  local: {provider: scripted}\n" + SECTION
    local = ScriptedModel([], name="local")
    async with scripted_harness(ScriptedModel([]), local, plugins=PLUGINS, config_text=config) as h:
        await h.agents.create("a", options={"model": "scripted"})


async def test_the_agents_dsh_yml_lists_start_with_the_harness_unchecked() -> None:
    # `dsh run -m local` (or dsh run picking local) with agents listed in dsh.yml whose
    # model is not local: they start with the harness, before the command starts the
    # bundled model and creates its own agent (checked then); refusing them refused
    # the command
    agents = "models:\n  scripted: {provider: scripted}\nagents:\n  - id: main\n"
    for config in (
        agents + "    model: scripted\n" + SECTION,
        agents + "    model: scripted\n    options:\n      summaries: {model: local}\n",
        agents + SECTION,
        "model: local\nagents:\n  - id: a\n" + SECTION,
        "agents:\n  - id: a\n    model: local\n" + SECTION,
    ):
        async with scripted_harness(ScriptedModel([]), plugins=PLUGINS, config_text=config) as h:
            assert len(h.agents.list()) == 1
            h.models.add("local", ScriptedModel([], name="local"), "local")  # as start_local
            await h.agents.create("cli", options={"model": "local"})


class Aliased(BaseModel):
    summary_model: ModelName | None = Field(default=None, alias="summaryModel")


class AliasedPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Aliased, section="summaries")


async def test_a_model_name_field_with_an_alias_is_read_by_the_key_the_file_writes() -> None:
    plugins = [("summaries", AliasedPlugin())]
    section = "summaries:\n  summaryModel: local\n"
    async with scripted_harness(ScriptedModel([]), plugins=plugins, config_text=section) as h:
        with pytest.raises(DshError, match=r"<string>:2:3: summaries\.summaryModel: 'local'"):
            await h.agents.create("a", options={"model": "scripted"})
        options = {"model": "scripted", "summaries": {"summaryModel": "scripted"}}
        await h.agents.create("b", options=options)  # replaced: not refused
    agents = "agents:\n  - id: a\n    model: m\n    options:\n      summaries:\n"
    config = "models:\n  m: {provider: scripted}\n" + agents + "        summaryModel: nosuch\n"
    with pytest.raises(ConfigError, match=r"summaries\.summaryModel: unknown model 'nosuch'"):
        async with scripted_harness(
            ScriptedModel([], name="m"), plugins=plugins, config_text=config
        ):
            pass


async def test_a_resume_is_not_refused_for_an_unregistered_local() -> None:
    store = InMemoryPersistence()
    plugins = [("mem", store), *PLUGINS]
    local = ScriptedModel([], name="local")
    async with scripted_harness(ScriptedModel([text("one")]), local, plugins=plugins) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        session_id, stored = agent.session.id, dict(agent.agent.options)
        await agent.dispose()
    models = (ScriptedModel([text("two")]),)
    async with scripted_harness(*models, plugins=plugins, config_text=SECTION) as h:
        resumed = await h.agents.resume("b", session_id, options=stored)
        assert resumed.agent.options["model"] == "scripted"
