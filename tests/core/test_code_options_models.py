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
        "scripted, summarizer; local is built in); did you mean 'summarizer'?"
    )


async def test_model_names_in_a_mapping_or_a_list_are_checked_each_with_its_place() -> None:
    message = await refused({"summaries": {"others": {"short": "summarizer", "long": "bgi"}}})
    assert message.startswith("agent 'a': option summaries.others.long: unknown model 'bgi'")
    message = await refused({"summaries": {"chain": ["scripted", "nope"]}})
    assert message.startswith("agent 'a': option summaries.chain[1]: unknown model 'nope'")


async def test_registered_names_and_local_and_unset_fields_are_accepted() -> None:
    await create({"summaries": {"model": "summarizer", "chain": ["scripted"]}})
    await create({"summaries": {"model": "local"}})  # built in, as in dsh.yml
    await create({"summaries": {"model": None, "note": "nope"}})
    # the default ("builtin") and the section's value are not the options' to answer for
    await create({"summaries": {}}, config=CONFIG.replace("{model:", "{fallback:"))


async def test_a_settings_object_given_whole_is_checked_too() -> None:
    message = await refused({"summaries": Summaries(model="sumarizer")})
    assert message.startswith("agent 'a': option summaries.model: unknown model 'sumarizer'")
    await create({"summaries": Summaries(model="summarizer")})
