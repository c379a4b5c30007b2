"""The ``compaction:`` section and the agent option ``compaction``: defaults < section <
agent option."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import events_of, harness, reads, summarizer

from dsh import ConfigError, DshError
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import CompactionSettings

pytestmark = pytest.mark.plugins("compaction")

# the summariser is served by a plugin (the scripted models): `models:` declares it
SECTION = (
    "models:\n  summarizer: {provider: scripted}\n"
    "compaction:\n  threshold: 0.5\n  model: summarizer\n  prune_chars: 0\n"
)


def test_the_defaults() -> None:
    settings = CompactionSettings()

    assert (settings.enabled, settings.threshold, settings.tail_ratio) == (True, 0.8, 0.3)
    assert (settings.model, settings.prompt, settings.context_window) == (None, None, None)
    assert (settings.max_summary_tokens, settings.timeout) == (2048, 120.0)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("compaction:\n  treshold: 0.5\n", "compaction.treshold"),
        ("compaction:\n  threshold: 1.5\n", "compaction.threshold"),
        ("compaction:\n  timeout: -1\n", "compaction.timeout"),
        # strict, as the core's options are: text is not a number or a yes/no
        ("compaction:\n  threshold: '0.5'\n", "compaction.threshold"),
        ("compaction:\n  enabled: 'yes'\n", "compaction.enabled"),
        ("compaction:\n  context_window: '4000'\n", "compaction.context_window"),
        ("compaction:\n  max_summary_tokens: true\n", "compaction.max_summary_tokens"),
        ("compaction:\n  prune_chars: 2000.0\n", "compaction.prune_chars"),
        # an empty prompt was the default prompt, silently
        ("compaction:\n  prompt: ''\n", "compaction.prompt"),
        # a summariser that dsh.yml does not define is found at load, with its line
        (
            "models:\n  big: {provider: scripted}\ncompaction:\n  model: bgi\n",
            r"4:3: compaction.model: unknown model 'bgi' "
            r"\(models defined: big; local runs when an agent.s model is local\); did you mean",
        ),
    ],
)
async def test_the_section_is_validated_with_the_key_path(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=rf"{where}"):
        async with harness(config_text=text):
            pass


async def test_an_unknown_summariser_is_said_with_the_sections_other_problems() -> None:
    """It was said only once the misspelt key beside it was fixed (a second check)."""
    text = "models:\n  big: {provider: scripted}\ncompaction:\n  treshold: 0.5\n  model: bgi\n"
    with pytest.raises(ConfigError) as caught:
        async with harness(config_text=text):
            pass
    assert [p.path for p in caught.value.problems] == ["compaction.treshold", "compaction.model"]


NAN = "Input should be a number, not .nan (NaN)"


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("threshold", ".nan", NAN),
        ("tail_ratio", ".nan", NAN),
        ("timeout", ".nan", NAN),
        ("chars_per_token", ".nan", NAN),
        # every estimate would be 0 tokens: compaction silently never ran
        ("chars_per_token", ".inf", "Input should be a finite number, not .inf"),
    ],
)
async def test_a_float_setting_of_nan_or_a_useless_infinity_is_said_so(
    key: str, value: str, reason: str
) -> None:
    """NaN was "should be greater than 0" (or "less than 1"): no bound refuses it."""
    with pytest.raises(ConfigError) as caught:
        async with harness(config_text=f"compaction:\n  {key}: {value}\n"):
            pass
    assert (caught.value.path, caught.value.reason) == (f"compaction.{key}", reason)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        # the summariser got '   ' as its instructions: the built-in prompt silently lost
        ("prompt", "''", "is blank"),
        ("prompt", "'   '", "is blank"),
        ("prompt", '"\\n\\t"', "is blank"),
        # every request counted as nearly empty: compaction silently never ran
        ("chars_per_token", "1.0e+6", "at most 16"),
        ("chars_per_token", "17", "at most 16"),
    ],
)
async def test_a_setting_that_would_silently_do_nothing_is_refused(
    key: str, value: str, said: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        async with harness(config_text=f"compaction:\n  {key}: {value}\n"):
            pass
    assert caught.value.path == f"compaction.{key}"
    assert said in caught.value.reason


async def test_a_setting_that_would_silently_do_nothing_is_refused_in_code() -> None:
    async with harness() as h:
        for bad, said in (
            ({"prompt": " "}, "prompt: is blank"),
            ({"chars_per_token": 100.0}, "100 is too many: at most 16"),
        ):
            with pytest.raises(DshError, match=said):
                await h.agents.create("a", options={"compaction": bad})


def test_sixteen_characters_per_token_is_the_largest() -> None:
    assert CompactionSettings.model_validate({"chars_per_token": 16}).chars_per_token == 16.0
    assert CompactionSettings.model_validate({"prompt": " Summarise. "}).prompt == " Summarise. "


async def test_a_timeout_of_infinity_is_no_limit() -> None:
    async with harness(config_text="compaction:\n  timeout: .inf\n") as h:
        assert h.config.section("compaction").timeout == float("inf")


def test_numbers_may_be_given_as_yaml_writes_them() -> None:
    settings = CompactionSettings.model_validate({"timeout": 30, "chars_per_token": 3})
    assert (settings.timeout, settings.chars_per_token) == (30.0, 3.0)


async def first_compaction(config_text: str | None, **agent_options: Any) -> Any:
    model = ScriptedModel(reads(5), context_window=7000)
    async with harness(model, summarizer("s"), config_text=config_text) as h:
        agent = await h.agents.create("a", options={"model": "scripted", **agent_options})
        events = await run_turn(agent, "task")
    starts = events_of(events, "compact/start")
    return starts[0] if starts else events[-1]


async def test_the_harness_section_applies_to_its_agents() -> None:
    start = await first_compaction(SECTION)

    # 0.5 of 7000: the fourth request (3704 tokens) already passes
    assert (start.data["threshold"], start.data["step"]) == (0.5, 4)


async def test_the_agent_option_overrides_the_section_key_by_key() -> None:
    start = await first_compaction(SECTION, compaction={"threshold": 0.8})

    # the section's summariser model and prune_chars still apply
    assert (start.data["threshold"], start.data["step"]) == (0.8, 6)


async def test_context_window_in_settings_replaces_the_models_info() -> None:
    start = await first_compaction(SECTION, compaction={"context_window": 4000})

    assert (start.data["context_window"], start.data["step"]) == (4000, 3)


async def test_without_a_known_window_the_threshold_never_triggers() -> None:
    model = ScriptedModel(reads(5), context_window=None)
    async with harness(model, summarizer(), config_text=SECTION) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "task")

    assert events_of(events) == []
    assert events[-1].data["reason"] == "completed"


async def test_enabled_false_turns_automatic_compaction_off() -> None:
    end = await first_compaction(SECTION, compaction={"enabled": False})

    assert end.type == "turn/end" and end.data["reason"] == "completed"


async def test_a_bad_agent_option_ends_the_turn_naming_the_plugin_and_key() -> None:
    """Set on a live agent (given at creation, the core refuses it there)."""
    model = ScriptedModel(reads(5), context_window=7000)
    async with harness(model, summarizer("s"), config_text=SECTION) as h:
        options = {"model": "scripted", "compaction": {"threshold": "high"}}
        with pytest.raises(DshError, match=r"option compaction\.threshold"):
            await h.agents.create("a", options=options)
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.agent.options["compaction"] = {"threshold": "high"}
        end = (await run_turn(agent, "task"))[-1]

    assert end.data["reason"] == "error"
    assert end.data["error"]["plugin"] == "compaction"
    assert "option 'compaction': threshold:" in end.data["error"]["message"]


async def test_a_summariser_model_typo_in_code_options_is_refused_at_create() -> None:
    """As in dsh.yml's agents[].options: not found when the first compaction runs."""
    model = ScriptedModel([], context_window=7000)
    async with harness(model, summarizer(), config_text=SECTION) as h:
        options = {"model": "scripted", "compaction": {"model": "sumarizer"}}
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options=options)
        await h.agents.create("b", options={**options, "compaction": {"model": "summarizer"}})

    assert str(caught.value) == (
        "agent 'a': option compaction.model: unknown model 'sumarizer' (registered: "
        "scripted, summarizer); did you mean 'summarizer'?"
    )
