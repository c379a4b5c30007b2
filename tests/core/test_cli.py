"""The `dsh` command: plugin listing and versions (the full CLI is tested through a pty)."""

from __future__ import annotations

import json

import pytest

import dsh
from dsh.cli import main


def test_plugins_json_lists_core_defaults(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.plugins import CORE_DEFAULTS

    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["plugins", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == list(CORE_DEFAULTS)
    assert {(row["distribution"], row["version"]) for row in rows} == {
        ("dsh-core", dsh.__version__)
    }
    assert "tools_execute" in rows[0]["hooks"]


def test_unknown_plugin_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["-p", "no-such-plugin", "plugins"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: no plugin named no-such-plugin")
    assert "Traceback" not in err


def test_version_matches_distribution_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert version("dsh-core") == dsh.__version__
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"dsh-core {dsh.__version__}"


def test_plugins_add_commands_and_async_ones_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typing import Any

    from dsh import hookimpl
    from dsh.commands import Command, CommandContext

    async def greet(context: CommandContext) -> int:
        print(f"hello {context.args.who}")
        return 3

    class Greeter:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(
                Command(
                    "greet",
                    "say hello",
                    greet,
                    configure=lambda parser: parser.add_argument("who"),
                )
            )

    import dsh.plugins

    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kw: real([("greeter", Greeter())], load_entry_points=False),
    )
    assert main(["greet", "world"]) == 3
    assert capsys.readouterr().out == "hello world\n"
