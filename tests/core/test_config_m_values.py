"""dsh.yml values found unpinned by a hand mutation review of the config modules: the
limits of models and agents, the core's agent options, and the options an entry gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import fails, write

from dsh import ConfigError, DshError
from dsh._options import core_option_problem
from dsh.config import AgentConfig, ModelConfig, load_config
from dsh.testing import ScriptedModel, scripted_harness

SCRIPTED = "model: scripted\nmodels:\n  scripted: {provider: scripted}\n"


def test_model_defaults_are_those_docs_config_md_gives() -> None:
    model = ModelConfig(provider="x")
    assert (model.timeout, model.read_timeout, model.max_retries) == (60.0, None, 2)
    assert (model.context_window, model.max_output_tokens) == (None, None)
    assert (model.model, model.base_url, model.api_key_env, model.headers) == (
        None,
        None,
        None,
        {},
    )


@pytest.mark.parametrize(
    ("entry", "key", "reason"),
    [
        ("provider: ''", "provider", "String should have at least 1 character"),
        ("read_timeout: 0", "read_timeout", "Input should be greater than 0"),
        ("context_window: 0", "context_window", "Input should be greater than 0"),
        ("max_output_tokens: 0", "max_output_tokens", "Input should be greater than 0"),
        ("api_key_env: 1PASSWORD_KEY", "api_key_env", "must be the name of an environment"),
    ],
)
def test_model_settings_out_of_range_are_refused_with_their_key(
    tmp_path: Path, entry: str, key: str, reason: str
) -> None:
    provider = "" if key == "provider" else "    provider: x\n"
    path = write(tmp_path, f"models:\n  m:\n    {entry}\n{provider}")
    err = fails(path)
    assert (err.source, err.path) == (f"{path}:3:5", f"models.m.{key}")
    assert err.reason.startswith(reason)


def test_a_base_url_with_a_bad_port_says_what_is_wrong_with_it(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  m: {provider: x, base_url: 'http://h:port/v1'}\n")
    err = fails(path)
    assert err.reason.startswith("is not a valid URL (")
    assert "port" in err.reason.removeprefix("is not a valid URL")


def test_an_api_key_variable_that_is_set_but_empty_gives_no_key() -> None:
    model = ModelConfig(provider="x", api_key_env="DSH_TEST_EMPTY_KEY")
    assert model.api_key({"DSH_TEST_EMPTY_KEY": ""}) is None
    assert model.api_key({"DSH_TEST_EMPTY_KEY": "k"}) == "k"


@pytest.mark.parametrize(
    ("entry", "key", "reason"),
    [
        ("max_steps: 0", "max_steps", "Input should be greater than 0"),
        ("queue_mode: fifo", "queue_mode", "Input should be 'batch' or 'one-at-a-time'"),
    ],
)
def test_agent_settings_out_of_range_are_refused_when_the_file_loads(
    tmp_path: Path, entry: str, key: str, reason: str
) -> None:
    path = write(tmp_path, f"agents:\n  - id: a\n    {entry}\n")
    err = fails(path)
    assert (err.source, err.path, err.reason) == (f"{path}:3:5", f"agents[0].{key}", reason)


@pytest.mark.parametrize(
    ("entry", "path", "expected"),
    [
        ("models:\n  m: {provider: x, timeout: true}\n", "models.m.timeout", "a valid number"),
        ("models:\n  m: {provider: x, read_timeout: yes}\n", "models.m.read_timeout", "number"),
        ("models:\n  m: {provider: x, max_retries: on}\n", "models.m.max_retries", "integer"),
        (
            "models:\n  m: {provider: x, context_window: '8192'}\n",
            "models.m.context_window",
            "integer",
        ),
        ("agents:\n  - {id: a, max_steps: true}\n", "agents[0].max_steps", "a valid integer"),
    ],
)
def test_numbers_of_models_and_agents_are_not_booleans_or_text(
    tmp_path: Path, entry: str, path: str, expected: str
) -> None:
    """As under options: YAML reads yes/on/true as booleans, which are no counts."""
    err = fails(write(tmp_path, entry))
    assert err.path == path and expected in err.reason


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("{max_steps: true}", "option 'max_steps' must be an int > 0, not true (a boolean)"),
        ("{max_steps: null}", "option 'max_steps' must be an int > 0, not null"),
        ("{max_tokens: 0}", "option 'max_tokens' must be an int > 0, not 0"),
        ("{max_tokens: true}", "option 'max_tokens' must be an int > 0, not true (a boolean)"),
        ("{max_request_retries: -1}", "option 'max_request_retries' must be an int >= 0"),
        ("{queue_mode: null}", "option 'queue_mode' must be 'batch' or 'one-at-a-time'"),
    ],
)
def test_core_options_are_refused_at_their_bounds_and_for_booleans(
    tmp_path: Path, options: str, expected: str
) -> None:
    # YAML reads `true` as a bool, which Python would take for the int 1
    path = write(tmp_path, f"agents:\n  - id: main\n    options: {options}\n")
    err = fails(path)
    assert err.path == f"agents[0].options.{options[1:].partition(':')[0]}"
    assert err.reason.startswith(expected)


def test_core_options_accept_their_lowest_values(tmp_path: Path) -> None:
    text = "agents:\n  - id: main\n    options: {max_tokens: null, max_request_retries: 0}\n"
    (agent,) = load_config(write(tmp_path, text)).agents
    assert agent.options == {"max_tokens": None, "max_request_retries": 0}


def test_extra_roots_from_code_may_be_a_tuple_of_paths() -> None:
    assert core_option_problem({"extra_roots": (Path("/srv"), "/data")}) is None
    assert core_option_problem({"extra_roots": ("/srv", 3)}) == (
        "option 'extra_roots' must be a list of paths, not a tuple holding an int"
    )
    assert core_option_problem({"extra_roots": [None]}) == (  # not "a NoneType"
        "option 'extra_roots' must be a list of paths, not a list holding None"
    )


def test_an_entry_without_settings_gives_only_the_model_and_the_default_queue_mode() -> None:
    entry = AgentConfig(id="a")
    assert entry.own_options() == {}
    assert entry.agent_options("m") == {"model": "m", "queue_mode": "batch"}


def test_an_entrys_queue_mode_is_its_own_option_only_when_written() -> None:
    # `dsh sessions resume` lays own_options over the stored options: a queue mode the
    # file does not write must not replace the stored one
    assert AgentConfig(id="a", queue_mode="one-at-a-time").own_options() == {
        "queue_mode": "one-at-a-time"
    }
    assert AgentConfig(id="a", queue_mode="batch").own_options() == {"queue_mode": "batch"}


async def test_a_system_prompt_in_options_is_kept_when_the_entry_gives_none() -> None:
    text = SCRIPTED + "agents:\n  - id: a\n    options: {system_prompt: From options.}\n"
    model = ScriptedModel([])
    async with scripted_harness(model, config_text=text, load_entry_points=False) as h:
        started = h.agents.get("a")
        assert started is not None
        assert started.agent.options["system_prompt"] == "From options."


def test_source_names_the_defaults_too() -> None:
    assert load_config(source="built in").source == "built in"


async def test_queue_mode_in_agent_options_is_used_or_refused() -> None:
    text = SCRIPTED + "agents:\n  - id: a\n    options: {queue_mode: one-at-a-time}\n"
    try:
        load_config(text=text)
    except ConfigError as err:  # refusing it, with its place, would do too
        refused: ConfigError | None = err
    else:
        refused = None
    if refused is not None:
        assert refused.path == "agents[0].options.queue_mode"
        return
    model = ScriptedModel([])
    async with scripted_harness(model, config_text=text, load_entry_points=False) as h:
        started = h.agents.get("a")
        assert started is not None
        assert started.agent.options["queue_mode"] == "one-at-a-time"


@pytest.mark.parametrize(
    ("entry", "option"),
    [("max_steps: 3", "{max_steps: 4}"), ("queue_mode: batch", "{queue_mode: one-at-a-time}")],
)
def test_an_option_the_entry_sets_too_is_refused(tmp_path: Path, entry: str, option: str) -> None:
    key = entry.partition(":")[0]
    text = f"agents:\n  - id: a\n    {entry}\n    options: {option}\n"
    err = fails(write(tmp_path, text))
    assert (err.path, err.reason) == (
        f"agents[0].options.{key}",
        f"{key!r} is set on the agent itself as well (agents[0].{key}); set it there only",
    )


def test_an_unknown_model_in_agent_options_is_refused(tmp_path: Path) -> None:
    text = "models:\n  fast: {provider: x}\nagents:\n  - id: a\n    options: {model: fsat}\n"
    err = fails(write(tmp_path, text))
    assert (err.path, err.reason) == (
        "agents[0].options.model",
        "the model goes on the agent itself (agents[0].model), not in its options",
    )


SECRET = "Hunter2CorrectHorseBattery"


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("max_tokens", "must be an int > 0, not a string"),
        ("max_request_retries", "must be an int >= 0, not a string"),
        ("extra_roots", "must be a list of paths, not a string"),
        ("queue_mode", "must be 'batch' or 'one-at-a-time'"),
    ],
)
def test_a_core_option_of_the_wrong_kind_is_named_in_yamls_words_never_quoted(
    tmp_path: Path, key: str, expected: str
) -> None:
    # docs/config.md: a wrong-kind value is never named by itself (it might be a secret)
    err = fails(write(tmp_path, f"agents:\n  - id: a\n    options:\n      {key}: {SECRET}\n"))
    assert err.reason == f"option {key!r} {expected}"
    assert SECRET not in str(err)


def test_a_list_of_paths_holding_another_kind_names_that_kind(tmp_path: Path) -> None:
    text = f"agents:\n  - id: a\n    options:\n      extra_roots: [/srv, {{k: {SECRET}}}]\n"
    err = fails(write(tmp_path, text))
    assert err.reason == (
        "option 'extra_roots' must be a list of paths, not a list holding a mapping"
    )


async def test_a_core_option_from_code_is_named_by_its_type_never_quoted() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as info:
            await harness.agents.create("a", options={"max_tokens": SECRET})
    assert "option 'max_tokens' must be an int > 0, not a str" in str(info.value)
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ('max_steps: "ten"', "Input should be a valid integer, not a string"),
        ("max_steps: [1]", "Input should be a valid integer, not a list"),
    ],
)
def test_a_count_of_the_wrong_kind_says_what_it_got(
    tmp_path: Path, entry: str, expected: str
) -> None:
    err = fails(write(tmp_path, f"agents:\n  - id: a\n    {entry}\n"))
    assert (err.path, err.reason) == ("agents[0].max_steps", expected)
