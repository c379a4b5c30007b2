"""A plugin setting typed ``ModelName`` in an agent's options given in code
(``agents.create(options=...)``) is checked against the harness's models, as
``dsh.yml``'s ``agents[].options`` are against ``models:`` (``_cross_check``): a typo
of ``compaction.model`` is refused when the agent is created, not found when the
first compaction runs, hours later, as a failed compaction."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dsh import DshError, ModelName, hookimpl
from dsh.testing import ScriptedModel, scripted_harness


class Summaries(BaseModel):
    model: ModelName | None = None
    fallback: ModelName = "builtin"  # the plugin's own default is not the caller's problem
    others: dict[str, ModelName] = {}
    chain: list[ModelName] = []
    note: str = "not a model name"


class SummariesPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Summaries)


CONFIG = "models:\n  summarizer: {provider: scripted}\nsummaries: {model: summarizer}\n"


async def create(options: dict[str, Any], config: str = CONFIG) -> None:
    models = ScriptedModel([]), ScriptedModel([], name="summarizer")
    async with scripted_harness(
        *models, plugins=[("summaries", SummariesPlugin())], config_text=config
    ) as harness:
        await harness.agents.create("a", options={"model": "scripted", **options})


async def refused(options: dict[str, Any], config: str = CONFIG) -> str:
    with pytest.raises(DshError) as caught:
        await create(options, config)
    return str(caught.value)


async def test_a_model_name_typo_in_code_options_is_refused_at_create() -> None:
    message = await refused({"summaries": {"model": "sumarizer"}})
    assert message == (
        "agent 'a': option summaries.model: unknown model 'sumarizer' (registered: "
        "scripted, summarizer); did you mean 'summarizer'?"
    )


async def test_model_names_in_a_mapping_or_a_list_are_checked_each_with_its_place() -> None:
    message = await refused({"summaries": {"others": {"short": "summarizer", "long": "bgi"}}})
    assert message.startswith("agent 'a': option summaries.others.long: unknown model 'bgi'")
    message = await refused({"summaries": {"chain": ["scripted", "nope"]}})
    assert message.startswith("agent 'a': option summaries.chain[1]: unknown model 'nope'")


async def test_registered_names_and_unset_fields_are_accepted() -> None:
    await create({"summaries": {"model": "summarizer", "chain": ["scripted"]}})
    await create({"summaries": {"model": None, "note": "nope"}})
    # the default ("builtin") and the section's value are not the options' to answer for
    await create({"summaries": {}}, config=CONFIG.replace("{model:", "{fallback:"))


async def test_a_settings_object_given_whole_is_checked_too() -> None:
    message = await refused({"summaries": Summaries(model="sumarizer")})
    assert message.startswith("agent 'a': option summaries.model: unknown model 'sumarizer'")
    await create({"summaries": Summaries(model="summarizer")})


async def test_local_is_refused_when_nothing_registers_it() -> None:
    # nothing starts the bundled server for a plugin's setting: every compaction
    # would fail NO_MODEL hours later
    message = await refused({"summaries": {"model": "local"}})
    assert "unknown model 'local' (registered: scripted, summarizer)" in message


async def test_a_stored_session_naming_a_model_not_registered_here_is_continued() -> None:
    # its summariser was registered where it was created; `dsh run --continue` passes
    # the stored options back: refusing them would leave the session impossible to
    # continue (the review of 81021c3)
    from dsh.testing import InMemoryPersistence, run_turn, text

    store = InMemoryPersistence()
    first = ScriptedModel([text("one")]), ScriptedModel([], name="summarizer")
    plugins = [("mem", store), ("summaries", SummariesPlugin())]
    async with scripted_harness(*first, plugins=plugins) as h:
        options = {"model": "scripted", "summaries": {"model": "summarizer"}}
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id, stored = agent.session.id, dict(agent.agent.options)
        await agent.dispose()
    async with scripted_harness(ScriptedModel([text("two")]), plugins=plugins) as h:
        with pytest.raises(DshError, match="unknown model 'summarizer'"):
            await h.agents.create("b", options=stored)  # a new agent: refused
        resumed = await h.agents.resume("b", session_id, options=stored)
        assert resumed.agent.options["summaries"] == {"model": "summarizer"}
