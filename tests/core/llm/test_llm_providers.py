"""Building models from config and the CLI shorthand; config models in the harness."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh import ConfigError, DshError, ModelError, hookimpl
from dsh.config import ModelConfig
from dsh.harness import Harness
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model, known_limits, parse_model_shorthand
from dsh.testing import ScriptedModel, scripted_harness


@pytest.mark.parametrize(
    ("provider", "cls", "base_url", "key_env"),
    [
        ("openai", OpenAICompatibleModel, "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ("deepseek", OpenAICompatibleModel, "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
        ("anthropic", AnthropicModel, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
    ],
)
def test_named_providers_fill_in_their_defaults(
    provider: str, cls: type, base_url: str, key_env: str
) -> None:
    model = build_model("m", ModelConfig(provider=provider, model="some-model"))
    assert type(model) is cls
    assert (model.base_url, model.config.api_key_env, model.model_id) == (
        base_url,
        key_env,
        "some-model",
    )
    assert (model.info.name, model.info.provider) == ("m", provider)


def test_values_in_the_config_win_over_defaults() -> None:
    config = ModelConfig(
        provider="deepseek",
        model="deepseek-chat",
        base_url="https://proxy.example/v1/",
        api_key_env="MY_KEY",
        context_window=1000,
    )
    model = build_model("ds", config)
    assert (model.base_url, model.config.api_key_env) == ("https://proxy.example/v1", "MY_KEY")
    assert (model.info.context_window, model.info.max_output_tokens) == (1000, 8192)


def test_known_limits_use_the_longest_prefix() -> None:
    assert known_limits("claude-opus-4-1-20250805") == (200_000, 32_000)
    assert known_limits("gpt-4o-mini") == (128_000, 16_384)
    assert known_limits("qwen2.5-coder") == (None, None)
    model = build_model("c", ModelConfig(provider="anthropic", model="claude-sonnet-4-5"))
    assert (model.info.context_window, model.info.max_output_tokens) == (200_000, 64_000)


def test_openai_compatible_has_no_key_unless_named_and_needs_a_base_url() -> None:
    model = build_model("q", ModelConfig(provider="openai-compatible", base_url="http://h/v1"))
    assert model.api_key() is None
    assert model.model_id == "q"  # the provider's name defaults to the registered name
    with pytest.raises(ConfigError) as caught:
        build_model("q", ModelConfig(provider="openai-compatible"), source="dsh.yml")
    assert caught.value.path == "models.q.base_url"
    assert str(caught.value).startswith("dsh.yml: models.q.base_url: ")


def test_the_default_key_is_required_only_at_the_providers_own_endpoint() -> None:
    official = build_model("c", ModelConfig(provider="anthropic"), env={})
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY is not set") as caught:
        official.api_key()
    assert "(it holds anthropic's API key; api_key_env in a models: entry" in str(caught.value)
    local = ModelConfig(provider="anthropic", base_url="http://127.0.0.1:8082/v1")
    assert build_model("c", local, env={}).api_key() is None
    assert build_model("c", local, env={"ANTHROPIC_API_KEY": "k"}).api_key() == "k"
    named = local.model_copy(update={"api_key_env": "MY_KEY"})
    with pytest.raises(ModelError) as caught:
        build_model("c", named, env={}).api_key()
    assert str(caught.value) == (
        "model 'c': the environment variable MY_KEY (models.c.api_key_env) is not set "
        "(it holds the API key)"
    )


def test_a_key_pasted_into_api_key_env_is_not_repeated_when_unset() -> None:
    pasted = "gsk_8fJ2kLmQ9xYzR4tW7vBn3HdPq"  # a valid variable name, but a key
    config = ModelConfig(provider="openai-compatible", base_url="http://h/v1")
    model = build_model("m", config.model_copy(update={"api_key_env": pasted}), env={})
    with pytest.raises(ModelError) as caught:
        model.api_key()
    assert "models.m.api_key_env" in str(caught.value)
    assert pasted not in str(caught.value) and "gsk_" not in str(caught.value)


@pytest.mark.parametrize(
    "pasted",
    [
        "gsk_8fJ2kLmQ9xYzR4tW7vBn3HdPq",  # lower case, upper case and digits
        "a3f9c2e17b0d4e6f8a9b1c2d3e4f5a6b",  # a hex key: 16 characters or more, no _
        "sk-proj-abc",  # not a name at all (a config made without its checks)
    ],
)
def test_a_name_that_may_be_a_key_is_not_repeated_and_one_that_may_not_is(pasted: str) -> None:
    """The check of api_key_env lets letters, digits and _ through, which some keys are;
    such a value is hidden, a variable's name (MY_GATEWAY_KEY) named."""
    config = ModelConfig(provider="openai-compatible", base_url="http://h/v1")
    for value, shown in ((pasted, False), ("MY_GATEWAY_KEY", True), ("gw_key_2", True)):
        model = build_model("m", config.model_copy(update={"api_key_env": value}), env={})
        with pytest.raises(ModelError) as caught:
            model.api_key()
        assert (value in str(caught.value)) is shown, value


def test_an_unknown_provider_names_the_key_path() -> None:
    with pytest.raises(ConfigError) as caught:
        build_model("fast", ModelConfig(provider="openia"), source="dsh.yml")
    assert caught.value.path == "models.fast.provider"
    assert "'openia'" in str(caught.value)
    assert "openai-compatible" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "name", "provider", "model", "url"),
    [
        ("deepseek:deepseek-chat", "deepseek:deepseek-chat", "deepseek", "deepseek-chat", None),
        (
            "openai-compatible:qwen@http://127.0.0.1:8082/v1",
            "openai-compatible:qwen",
            "openai-compatible",
            "qwen",
            "http://127.0.0.1:8082/v1",
        ),
        (
            "openai-compatible:qwen2.5:0.5b@https://h:1/v1",
            "openai-compatible:qwen2.5:0.5b",
            "openai-compatible",
            "qwen2.5:0.5b",
            "https://h:1/v1",
        ),
        (
            "anthropic:claude-3-5-sonnet@20240620",
            "anthropic:claude-3-5-sonnet@20240620",
            "anthropic",
            "claude-3-5-sonnet@20240620",
            None,
        ),
    ],
)
def test_shorthand(text: str, name: str, provider: str, model: str, url: str | None) -> None:
    parsed_name, config = parse_model_shorthand(text)
    assert parsed_name == name
    assert (config.provider, config.model, config.base_url) == (provider, model, url)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("gpt-4o", "provider:model"),
        ("openai:", "provider:model"),
        ("openia:gpt-4o", "unknown provider 'openia'"),
        ("openia:gpt-4o", "did you mean 'openai'"),
    ],
)
def test_bad_shorthand(text: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        parse_model_shorthand(text)


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        ("openai-compatible:q@http://me:hunter2@h:1/v1", "base_url", "user name or password"),
        ("openai-compatible:q@http://me:hun/ter2@h/v1", "base_url", "user name or password"),
        ("openai-compatible:q@http://me:hun@ter2@h/v1", "base_url", "user name or password"),
        ("openai-compatible:q@http://me:hun#ter2@h/v1", "base_url", "user name or password"),
        ("openai-compatible:q@http://me:hun ter2@h/v1", "base_url", "no spaces"),
        ("nope:q@https://me:hunter2@h/v1", "", "unknown provider 'nope'"),
        ("openai-compatible:q@ftp://me:hunter2@h/v1", "base_url", "http:// or https://"),
    ],
)
def test_a_bad_shorthand_is_one_line_that_never_shows_a_password(
    text: str, path: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_shorthand(text)
    error = info.value
    assert (error.path, reason in error.reason) == (path, True)
    assert "***@" in error.source
    assert not {"hunter2", "hun", "ter2"} & set(re.findall(r"\w+", str(error)))
    assert "\n" not in str(error)
    assert error.__cause__ is None  # no pydantic error (which shows its input) behind it
    assert error.__context__ is None or error.__suppress_context__


@pytest.mark.parametrize(
    "text",
    [
        "openai-compatible:m@http://h @http://g/v1",
        "openai-compatible:m@http://a b@http://h/v1",
        "openai-compatible:m@http://h\n/v1",
        "openai-compatible:m@http://",
    ],
)
def test_the_first_at_http_starts_the_base_url_even_a_url_with_a_space(text: str) -> None:
    # as dsh._cli_keys reads a -m: a URL with a space was skipped over, the model built
    # with "m@http://h " as its name and http://g/v1 as its base_url
    with pytest.raises(ConfigError, match="no spaces") as info:
        parse_model_shorthand(text)
    assert info.value.path == "base_url"


CONFIG = """
model: fast
models:
  fast:
    provider: openai-compatible
    model: qwen
    base_url: http://127.0.0.1:9/v1
    context_window: 4096
  sonnet:
    provider: anthropic
    model: claude-sonnet-4-5
    api_key_env: DSH_TEST_ANTHROPIC_KEY
"""


async def test_config_models_are_registered_under_their_keys() -> None:
    async with Harness(config_text=CONFIG, load_entry_points=False) as harness:
        assert set(harness.models.names()) == {"fast", "sonnet"}
        assert harness.models.origin("fast") == "config"
        fast = harness.models.get("fast", agent="a")
        assert isinstance(fast, OpenAICompatibleModel)
        assert fast.info.context_window == 4096
        sonnet = harness.models.get("sonnet", agent="a")
        assert isinstance(sonnet, AnthropicModel)
        assert sonnet.info.max_output_tokens == 64_000


async def test_an_unknown_provider_stops_the_harness_with_the_line_and_key_path() -> None:
    text = "models:\n  fast:\n    provider: openia\n"
    match = r"^<string>:3:5: models\.fast\.provider: unknown provider"
    with pytest.raises(ConfigError, match=match):
        async with Harness(config_text=text, load_entry_points=False):
            pass


async def test_a_plugin_serves_a_config_model_whose_provider_is_not_built_in() -> None:
    text = "models:\n  scripted: {provider: scripted}\n  fast: {provider: deepseek}\n"
    async with scripted_harness(ScriptedModel(), config_text=text, load_entry_points=False) as h:
        assert h.models.origin("scripted") == "scripted-models"
        assert h.models.origin("fast") == "config"


async def test_a_plugin_model_clashing_with_a_built_in_config_model_is_an_error() -> None:
    class Plugin:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(ScriptedModel(name="fast"))

    text = "models:\n  fast: {provider: deepseek}\n"
    harness = Harness(plugins=[("mine", Plugin())], config_text=text, load_entry_points=False)
    with pytest.raises(
        DshError, match=r"<string>:2:10: .*plugin .mine. registers a model named .fast."
    ):
        async with harness:
            pass


@pytest.mark.parametrize(
    "failure",
    [OSError(28, "No space left on device"), RuntimeError("not this kind")],
)
async def test_a_local_model_that_cannot_start_is_one_message(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    from dsh.errors import DshError
    from dsh.llm import llama
    from dsh.llm._llama_build import ServerError
    from dsh.llm.local import start_local
    from dsh.testing import ScriptedModel, scripted_harness

    def start(**_: object) -> None:
        raise failure

    monkeypatch.setattr(llama, "start", start)
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        if isinstance(failure, OSError):
            with pytest.raises(DshError, match=r"the local model could not start: .*No space"):
                await start_local(harness)
        else:  # a bug is not dressed up as a user error
            with pytest.raises(RuntimeError):
                await start_local(harness)
        monkeypatch.setattr(llama, "start", lambda **_: (_ for _ in ()).throw(ServerError("x")))
        with pytest.raises(DshError, match="could not start: x; name a model with -m"):
            await start_local(harness)
