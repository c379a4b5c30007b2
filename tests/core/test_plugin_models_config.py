"""A ``models:`` entry of dsh.yml for a model a plugin registers (not built by dsh):
its ``context_window``, ``max_output_tokens`` and ``max_wait`` apply on top of the
plugin model's ``info``; the keys only dsh's HTTP providers read, a ``provider:`` that
names neither the plugin nor its model's provider, a name no plugin registers, and a
clash with a plugin's model are refused with the file's line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from cli_m_args_support import Install
from cli_m_args_support import _quiet_env as _quiet_env  # an autouse fixture
from loop_support import Models

from dsh.cli import main
from dsh.errors import ConfigError
from dsh.llm import ModelInfo
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def _start(config: str, *models: ScriptedModel) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        async with scripted_harness(*models, load_entry_points=False, config_text=config):
            pass
    return raised.value


async def test_limits_apply_on_top_of_the_plugin_models_info() -> None:
    model = ScriptedModel(["hi"], name="echo", context_window=4096, max_output_tokens=512)
    config = (
        "models:\n  echo: {provider: scripted, context_window: 100, max_output_tokens: 10,"
        " max_wait: 3.0}\n"
    )
    async with scripted_harness(model, load_entry_points=False, config_text=config) as h:
        info = h.models.get("echo", agent="t").info
    assert (info.context_window, info.max_output_tokens, info.max_wait) == (100, 10, 3.0)
    assert (info.name, info.provider) == ("echo", "scripted")


async def test_an_entry_without_limits_keeps_the_plugin_models_info() -> None:
    model = ScriptedModel(["hi"], name="echo", context_window=4096)
    config = "models:\n  echo: {provider: scripted-models}\n"  # the plugin's name
    async with scripted_harness(model, load_entry_points=False, config_text=config) as h:
        assert h.models.get("echo", agent="t").info.context_window == 4096


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ("base_url: 'http://nowhere'", "base_url"),
        ("timeout: 1.0", "timeout"),
        ("api_key_env: ECHO_KEY", "api_key_env"),
        ("headers: {X-Title: a}", "headers"),
        ("max_retries: 1", "max_retries"),
    ],
)
async def test_http_only_keys_are_refused_on_a_plugin_models_entry(entry: str, key: str) -> None:
    config = f"models:\n  echo:\n    provider: scripted\n    {entry}\n"
    error = await _start(config, ScriptedModel(name="echo"))
    assert error.source == "<string>:4:5", error
    assert key in error.reason and "plugin 'scripted-models'" in error.reason, error


async def test_a_provider_naming_neither_the_plugin_nor_its_models_provider() -> None:
    error = await _start("models:\n  echo: {provider: eco}\n", ScriptedModel(name="echo"))
    assert error.source.startswith("<string>:2:"), error
    assert "'eco'" in error.reason and "provider: scripted-models" in error.reason, error


async def test_a_name_no_plugin_registers_names_the_plugin_models() -> None:
    config = "model: try_ls\nmodels: {try_ls: {provider: scripted}}\n"
    error = await _start(config, ScriptedModel(name="try-ls"))
    assert "no plugin registers a model named 'try_ls'" in error.reason, error
    assert "try-ls" in error.reason and "did you mean" in error.reason, error


async def test_a_misspelt_provider_with_plugin_models_is_said_first_with_its_near_miss() -> None:
    """As when no plugin registers models (`unknown provider 'opnai' ...; did you mean
    'openai'?`), which docs/config.md promises of a misspelt choice."""
    error = await _start("models:\n  a: {provider: opnai}\n", ScriptedModel(name="echo"))
    assert error.reason.startswith("provider 'opnai' is not built in (built in: "), error
    assert error.reason.endswith(
        ", and no plugin registers a model named 'a' (models plugins register: echo); "
        "did you mean 'openai'?"
    ), error


async def test_a_built_in_entry_clashing_with_a_plugin_model_names_the_line() -> None:
    config = "models:\n  echo: {provider: openai, model: x}\n"
    error = await _start(config, ScriptedModel(name="echo"))
    assert error.source.startswith("<string>:2:"), error
    assert "plugin 'scripted-models'" in error.reason, error
    assert "'config'" not in str(error), error


async def test_the_limited_model_still_answers_and_wraps_the_registered_object() -> None:
    model = ScriptedModel(["hello"], name="echo")
    config = "models:\n  echo: {provider: scripted, context_window: 100}\n"
    async with scripted_harness(model, load_entry_points=False, config_text=config) as h:
        assert h.models.get("echo", agent="t").__wrapped__ is model
        agent = await h.agents.create("a", options={"model": "echo"})
        await run_turn(agent, "hi")
    assert len(model.requests) == 1
    model.assert_complete()


def test_config_check_refuses_an_http_key_on_a_plugin_models_entry(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    with_plugins(("scr", Models(ScriptedModel([], name="echo"))))
    Path("dsh.yml").write_text("models:\n  echo: {provider: scr, timeout: 1.0}\n")
    assert main(["config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dsh: {Path.cwd() / 'dsh.yml'}:2:25: models.echo.timeout: "), err
    Path("dsh.yml").write_text("models:\n  echo: {provider: scr, context_window: 100}\n")
    assert main(["config", "check"]) == 0


class _Azure(ScriptedModel):
    """A plugin's model whose provider is near a built-in one's name."""

    @property
    def info(self) -> ModelInfo:
        return replace(super().info, provider="azure-openai")


@pytest.mark.parametrize("provider", ["azure-openai", "scripted-models"])
async def test_a_misspelt_plugin_model_name_suggests_the_plugins_model(provider: str) -> None:
    """The provider names the plugin (or its model's provider): the slip is in the name.
    'openai' suggested there would send the user's OpenAI key to api.openai.com (review
    rerev-cli, finding 3)."""
    config = f"model: gpt4o-ue\nmodels:\n  gpt4o-ue: {{provider: {provider}}}\n"
    error = await _start(config, _Azure(name="gpt4o-eu"))
    assert "no plugin registers a model named 'gpt4o-ue'" in error.reason, error
    assert error.reason.endswith("did you mean 'gpt4o-eu'?"), error
    assert "'openai'?" not in error.reason, error
