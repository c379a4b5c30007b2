"""``dsh models`` and ``dsh tools`` to the character: the tables' columns, the keys'
states and where each model came from (from a hand mutation review of _cli_list)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli_listings import CONFIG, quiet

import dsh.harness  # binds create_plugin_manager by name: imported before a test patches it
import dsh.plugins
from dsh import hookimpl
from dsh.cli import main
from dsh.testing import ScriptedModel
from dsh.tools import tool

# Columns as wide as their widest cell, two spaces apart; CONTEXT aligned right; FROM
# (the last) not padded.
MODELS = """\
NAME   PROVIDER           MODEL                          CONTEXT  KEY                       FROM
house  scripted           -                                4,096  -                         plugin in-house
fast   openai             gpt-4.1-mini                 1,000,000  OPENAI_API_KEY (not set)  {config}
box    openai-compatible  qwen                                 -  -                         {config}
local  llama.cpp          qwen2.5-coder-0.5b-instruct      8,192  -                         built in (started when used)
dsh run and dsh chat use box: the model of agent 'main' in {config}
"""  # noqa: E501
TOOLS = """\
NAME              PLUGIN    MUTATING  DESCRIPTION
mark              in-house  no        Mark a file on two lines.
a-long-tool-name  in-house  yes       No sentence end
dotted            in-house  no        Reads dsh.yml, then stops.
"""


@tool(description="Mark  a file\n   on two lines. Then a second sentence.")
def mark(path: str) -> str:
    return path


@tool(name="a-long-tool-name", description="No sentence end", mutating=True)
def long_named() -> str:
    return ""


@tool(name="dotted", description="Reads dsh.yml, then stops.")
def dotted() -> str:
    return ""


class InHouse:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(ScriptedModel([], context_window=4096), "house")

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(mark)
        register(long_named)
        register(dotted)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No entry-point plugin, no provider key, no $DSH_CONFIG; the in-house plugin."""
    quiet(monkeypatch)
    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kwargs: real([("in-house", InHouse())], **kwargs),
    )
    return tmp_path


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict[str, Any]]:
    assert main([*argv, "--json"]) == 0
    return {row["name"]: row for row in json.loads(capsys.readouterr().out)}


def test_the_models_table_to_the_character(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workspace / "dsh.yml"
    config.write_text(CONFIG)
    assert main(["--cwd", str(workspace), "models"]) == 0
    assert capsys.readouterr().out == MODELS.format(config=config)


def test_the_tools_table_to_the_character(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the core's tools blocked, so that the table holds only these three
    assert main(["--cwd", str(workspace), "-p", "no:dsh.builtin_tools", "tools"]) == 0
    assert capsys.readouterr().out == TOOLS


def test_the_tools_table_aligns_the_built_in_tools_too(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--cwd", str(workspace), "tools"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    starts = [header.index(title) for title in ("PLUGIN", "MUTATING", "DESCRIPTION")]
    assert len(lines) > 3
    for line in lines:
        for start in starts:
            assert line[start - 2 : start] == "  " and line[start] != " ", (line, start)


def test_a_key_set_to_nothing_is_no_key_and_said_to_be_blank(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "dsh.yml").write_text(CONFIG)
    monkeypatch.setenv("OPENAI_API_KEY", "")
    rows = listed(capsys, "--cwd", str(workspace), "models")
    fast = rows["fast"]
    assert (fast["api_key_env"], fast["api_key_set"], fast["api_key_blank"]) == (
        "OPENAI_API_KEY",
        False,
        True,
    )
    assert main(["--cwd", str(workspace), "models"]) == 0
    assert "  OPENAI_API_KEY (set but blank)  " in capsys.readouterr().out


def test_the_built_in_local_model_not_used_has_no_reason(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "dsh.yml").write_text(CONFIG)
    local = listed(capsys, "--cwd", str(workspace), "models")["local"]
    assert (local["used"], local["why"], local["plugin"]) == (False, None, None)
    assert (local["api_key_env"], local["api_key_set"], local["max_output_tokens"]) == (
        None,
        None,
        None,
    )


def test_a_model_from_the_command_line_says_so(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = listed(capsys, "--cwd", str(workspace), "-m", "deepseek:deepseek-chat", "models")
    row = rows["deepseek:deepseek-chat"]
    assert (row["plugin"], row["from"]) == ("cli", "the command line (-m or a provider key)")
    assert (rows["house"]["from"], rows["house"]["used"]) == ("plugin in-house", False)


def test_the_tools_json_rows(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = listed(capsys, "--cwd", str(workspace), "-p", "no:dsh.builtin_tools", "tools")
    assert list(rows) == ["mark", "a-long-tool-name", "dotted"]
    assert rows["mark"]["description"] == "Mark  a file\n   on two lines. Then a second sentence."
    assert rows["mark"]["parameters"]["required"] == ["path"]
    assert (rows["a-long-tool-name"]["plugin"], rows["a-long-tool-name"]["mutating"]) == (
        "in-house",
        True,
    )
