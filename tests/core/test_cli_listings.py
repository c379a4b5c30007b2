"""`dsh models` and `dsh tools`: what an agent of `dsh run` can use, and where each came
from. They enter the harness `dsh run` would, so they list what it would have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dsh.harness  # binds create_plugin_manager by name: imported before a test patches it
import dsh.plugins
from dsh import hookimpl
from dsh.cli import main
from dsh.llm.choose import ENV_PROVIDERS
from dsh.testing import ScriptedModel
from dsh.tools import tool

CONFIG = """\
models:
  fast:
    provider: openai
    model: gpt-4.1-mini
    context_window: 1000000
  box:
    provider: openai-compatible
    model: qwen
    base_url: http://127.0.0.1:9/v1
agents:
  - id: main
    model: box
"""


@tool(mutating=True, path_args=("path",))
def stamp(path: str) -> str:
    """Stamp a file, e.g. notes.txt. It writes the date at its end.

    Nothing else."""
    return path


class InHouse:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(ScriptedModel([], context_window=4096), "house")

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(stamp)


def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """No entry-point plugin, no provider key, no $DSH_CONFIG: only what a test gives."""
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    monkeypatch.delenv("DSH_CONFIG", raising=False)
    for variable, _ in ENV_PROVIDERS:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    quiet(monkeypatch)
    return tmp_path


@pytest.fixture
def in_house(monkeypatch: pytest.MonkeyPatch) -> None:
    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kwargs: real([("in-house", InHouse())], **kwargs),
    )


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main([*argv, "--json"]) == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return rows


def test_models_lists_configured_plugin_and_built_in_models_and_the_one_run_uses(
    workspace: Path, in_house: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workspace / "dsh.yml"
    config.write_text(CONFIG)
    assert main(["--cwd", str(workspace), "models"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAME", "PROVIDER", "MODEL", "CONTEXT", "KEY", "FROM"]
    assert [line.split()[:4] for line in out[1:-1]] == [
        ["house", "scripted", "-", "4,096"],
        ["fast", "openai", "gpt-4.1-mini", "1,000,000"],
        ["box", "openai-compatible", "qwen", "-"],
        ["local", "llama.cpp", "qwen2.5-coder-0.5b-instruct", "8,192"],
    ]
    assert out[1].endswith("  plugin in-house") and out[2].endswith(f"  {config}")
    assert "  OPENAI_API_KEY (not set)  " in out[2] and out[3].split()[4] == "-"
    assert out[-1] == f"dsh run and dsh chat use box: the model of agent 'main' in {config}"

    rows = {row["name"]: row for row in listed(capsys, "--cwd", str(workspace), "models")}
    assert [name for name, row in rows.items() if row["used"]] == ["box"]
    assert rows["box"]["why"] == f"the model of agent 'main' in {config}"
    assert rows["fast"]["why"] is None
    assert (rows["fast"]["plugin"], rows["house"]["plugin"], rows["local"]["plugin"]) == (
        "config",
        "in-house",
        None,
    )
    assert rows["fast"]["max_output_tokens"] == 32768  # the provider's default, filled in
    assert (rows["fast"]["api_key_env"], rows["fast"]["api_key_set"]) == ("OPENAI_API_KEY", False)
    assert (rows["house"]["api_key_env"], rows["house"]["api_key_set"]) == (None, None)


def test_models_follow_m_as_run_does(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "dsh.yml").write_text(CONFIG)
    rows = listed(capsys, "--cwd", str(workspace), "-m", "deepseek:deepseek-chat", "models")
    used = [row for row in rows if row["used"]]
    assert [(r["name"], r["plugin"], r["why"]) for r in used] == [
        ("deepseek:deepseek-chat", "cli", "chosen with -m")
    ]
    assert main(["--cwd", str(workspace), "-m", "fsat", "models"]) == 2
    assert "did you mean 'fast'?" in capsys.readouterr().err


def test_models_without_config_or_key_use_the_local_model(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = listed(capsys, "--cwd", str(workspace), "models")
    assert [(r["name"], r["used"], r["from"]) for r in rows] == [
        ("local", True, "built in (started when used)")
    ]
    assert rows[0]["why"] == "no model is configured and no provider key is set"


def test_a_configured_local_model_replaces_the_built_in_one(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "dsh.yml").write_text(
        "models:\n  local:\n    provider: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n"
    )
    rows = listed(capsys, "--cwd", str(workspace), "models")
    assert [(r["name"], r["provider"], r["plugin"]) for r in rows] == [
        ("local", "openai-compatible", "config")
    ]


def test_a_provider_key_picks_the_model_and_is_never_shown(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-4242")
    assert main(["--cwd", str(workspace), "models"]) == 0
    assert main(["--cwd", str(workspace), "models", "--json"]) == 0
    captured = capsys.readouterr()
    assert "sk-ant-secret-4242" not in captured.out + captured.err
    assert "dsh run and dsh chat use anthropic:claude-sonnet-4-5: ANTHROPIC_API_KEY is set" in (
        captured.out
    )
    assert "  ANTHROPIC_API_KEY (set)  " in captured.out
    json_part = captured.out[captured.out.index("[") :]
    [row] = [r for r in json.loads(json_part) if r["name"] == "anthropic:claude-sonnet-4-5"]
    assert (row["api_key_env"], row["api_key_set"]) == ("ANTHROPIC_API_KEY", True)


def test_a_bad_config_is_one_clear_line(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workspace / "dsh.yml"
    config.write_text("models:\n  fast:\n    provider: openai\n    temprature: 1\n")
    for command in ("models", "tools"):
        assert main(["--cwd", str(workspace), command]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dsh: error: {config}:4:5: models.fast.temprature: unknown key")
        assert "Traceback" not in err


def test_tools_lists_each_tool_with_its_plugin_and_what_permissions_read(
    workspace: Path, in_house: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from dsh.builtin_tools import builtin_tools

    assert main(["--cwd", str(workspace), "tools"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAME", "PLUGIN", "MUTATING", "DESCRIPTION"]
    # core defaults register last, so that a plugin's tool can take a built-in's name
    # the first sentence: "e.g. " does not end it
    assert out[1].split(None, 3) == ["stamp", "in-house", "yes", "Stamp a file, e.g. notes.txt."]
    read = next(line for line in out if line.startswith("read "))
    assert read.split(None, 3) == ["read", "dsh.builtin_tools", "no", "Read a text file."]

    rows = {row["name"]: row for row in listed(capsys, "--cwd", str(workspace), "tools")}
    builtins = builtin_tools()
    assert list(rows) == ["stamp"] + [t.name for t in builtins]
    for builtin in builtins:
        row = rows[builtin.name]
        assert row["plugin"] == "dsh.builtin_tools"
        assert row["parameters"] == builtin.spec.parameters
        assert row["description"] == builtin.description
        assert (row["mutating"], row["path_args"], row["command_args"], row["reads"]) == (
            builtin.mutating,
            list(builtin.path_args),
            list(builtin.command_args),
            builtin.reads,
        )
    assert (rows["stamp"]["mutating"], rows["stamp"]["path_args"]) == (True, ["path"])


class DictSettings:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(dict)


@pytest.mark.parametrize("command", [["config", "check"], ["tools"]])
def test_settings_that_are_not_a_model_are_one_line_naming_the_plugin(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    (workspace / "dsh.yml").write_text("loud: {level: 1}\n")
    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kwargs: real([("loud", DictSettings())], **kwargs),
    )
    assert main(["--cwd", str(workspace), *command]) == 2
    err = capsys.readouterr().err
    # the core's refusal, which names the plugin, not "failed in hook register_settings"
    assert err == (
        "dsh: error: plugin 'loud' registered settings dict, a class that is not a "
        "pydantic model; it must be a subclass of pydantic.BaseModel\n"
    )


def test_a_key_of_whitespace_only_is_shown_not_set(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CRLF .env's empty ``OPENAI_API_KEY=`` leaves a lone CR: no key, as a request
    sees it (it was listed as set, and chosen)."""
    for variable, _ in ENV_PROVIDERS:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "\r")
    (workspace / "dsh.yml").write_text("models:\n  fast:\n    provider: openai\n    model: m\n")
    rows = {row["name"]: row for row in listed(capsys, "--cwd", str(workspace), "models")}
    assert rows["fast"]["api_key_set"] is False
    assert [name for name, row in rows.items() if row["used"]] == ["local"]
