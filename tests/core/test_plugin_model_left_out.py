"""A ``models:`` entry for a model a plugin serves, run with that plugin installed but
not loaded (``-p no:NAME``, ``DSH_LOAD_PLUGINS`` without it): the entry's provider is
one dsh does not build, and the error said only ``unknown provider 'extra' (built in:
openai-compatible, ...)``, as for a typo, though dsh knows the plugin is there and what
left it out. It now says so, as a section for such a plugin does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh.cli import main
from dsh.errors import ConfigError
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness


def installed(names: dict[str, str], *blocked: str) -> PluginManager:
    """A manager whose installed plugins are ``names`` (name -> module), none loaded."""
    pm = create_plugin_manager([], load_entry_points=False)
    pm.installed = names
    for name in blocked:
        pm.set_blocked(name)
    return pm


async def refused(config: str, pm: PluginManager) -> str:
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(pm=pm, config_text=config):  # no model served
            pass
    return caught.value.reason


async def test_a_provider_naming_a_plugin_left_out_says_so() -> None:
    reason = await refused("models:\n  try-ls: {provider: extra}\n", installed({"extra": "x"}))
    assert reason.startswith("unknown provider 'extra' (built in: "), reason
    assert reason.endswith(
        "; plugin 'extra' is installed but not loaded: load it (DSH_LOAD_PLUGINS, -p extra)"
    ), reason


async def test_a_provider_naming_a_plugin_turned_off_says_so() -> None:
    pm = installed({"extra": "x"}, "extra")
    reason = await refused("models:\n  try-ls: {provider: extra}\n", pm)
    assert reason.endswith("; plugin 'extra' is installed but turned off (-p no:extra)"), reason


async def test_another_provider_names_the_plugins_not_loaded() -> None:
    """``provider: scripted`` (docs/testing.md's) names no plugin: any plugin not loaded
    may be the one serving the model."""
    pm = installed({"extra": "x", "more": "y"})
    reason = await refused("models:\n  try-ls: {provider: scripted}\n", pm)
    assert reason.endswith(
        "; if a plugin serves this model, it is not loaded (installed, not loaded: extra, more)"
    ), reason


async def test_no_hint_when_every_installed_plugin_runs() -> None:
    reason = await refused("models:\n  try-ls: {provider: scripted}\n", installed({}))
    assert reason.endswith("(built in: openai-compatible, openai, deepseek, anthropic)"), reason


def test_config_check_says_so_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dsh.harness

    assert dsh.harness is not None  # it binds create_plugin_manager when imported

    def create(*args: Any, **kwargs: Any) -> PluginManager:
        return installed({"extra": "x"})

    monkeypatch.setattr("dsh.plugins.create_plugin_manager", create)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSH_CONFIG", raising=False)
    Path("dsh.yml").write_text("models:\n  try-ls: {provider: extra}\n")
    assert main(["config", "check"]) == 1
    err = capsys.readouterr().err
    assert "plugin 'extra' is installed but not loaded" in err, err


async def test_a_misspelt_built_in_provider_gets_its_near_miss_alone() -> None:
    reason = await refused("models:\n  x: {provider: opnai}\n", installed({"extra": "x"}))
    assert reason.endswith("; did you mean 'openai'?"), reason


@pytest.mark.parametrize("provider", ["scripted", "scripted-models"])
async def test_a_provider_of_a_loaded_plugin_gets_no_hint(provider: str) -> None:
    """The plugin runs: the slip is in the model's name, which the error says."""
    pm = installed({"extra": "x"})
    config = f"models:\n  ehco: {{provider: {provider}}}\n"
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(ScriptedModel(name="echo"), pm=pm, config_text=config):
            pass
    assert caught.value.reason.endswith("did you mean 'echo'?"), caught.value.reason


@pytest.mark.parametrize("config", ["", "models:\n  fast: {provider: openai, model: x}\n"])
def test_an_unknown_m_names_the_plugins_not_loaded(
    config: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dsh -p no:extra -m try-ls run ...``: the model of a plugin left out."""
    import dsh.harness

    assert dsh.harness is not None

    def create(*args: Any, **kwargs: Any) -> PluginManager:
        return installed({"extra": "x"}, "extra")

    monkeypatch.setattr("dsh.plugins.create_plugin_manager", create)
    monkeypatch.chdir(tmp_path)
    for name in ("DSH_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    if config:
        Path("dsh.yml").write_text(config)
    assert main(["-m", "try-ls", "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: -m 'try-ls': unknown model"), err
    assert err.rstrip().endswith(
        " If a plugin serves it, it is not loaded (installed, not loaded: extra)."
    ), err


UNKNOWN_TRY_LS = "unknown model 'try-ls' (models defined: none; local is built in)"
NOT_LOADED = "; if a plugin serves this model, it is not loaded (installed, not loaded: extra)"


@pytest.mark.parametrize(
    ("config", "where"),
    [("model: try-ls\n", "model"), ("agents:\n  - {id: a, model: try-ls}\n", "agents[0].model")],
)
async def test_a_model_named_in_the_file_names_the_plugins_not_loaded(
    config: str, where: str
) -> None:
    """``model: try-ls`` with the plugin serving it turned off: as ``-m try-ls`` and a
    ``models:`` entry of its provider say, not as for a typo alone."""
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(pm=installed({"extra": "x"}, "extra"), config_text=config):
            pass
    assert caught.value.path == where
    assert caught.value.reason == UNKNOWN_TRY_LS + NOT_LOADED, caught.value.reason


async def test_a_model_named_in_the_file_with_a_near_miss_gets_that_alone() -> None:
    reason = await refused("model: lcoal\n", installed({"extra": "x"}, "extra"))
    assert reason.endswith("; did you mean 'local'?"), reason


async def test_a_model_named_in_the_file_gets_no_hint_when_every_plugin_runs() -> None:
    assert await refused("model: try-ls\n", installed({})) == UNKNOWN_TRY_LS


def test_config_check_names_the_plugins_not_loaded_for_the_files_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dsh.harness

    assert dsh.harness is not None

    def create(*args: Any, **kwargs: Any) -> PluginManager:
        return installed({"extra": "x"}, "extra")

    monkeypatch.setattr("dsh.plugins.create_plugin_manager", create)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSH_CONFIG", raising=False)
    Path("dsh.yml").write_text("model: try-ls\n")
    assert main(["config", "check"]) == 1
    err = capsys.readouterr().err
    assert f"model: {UNKNOWN_TRY_LS}{NOT_LOADED}\n" in err, err
