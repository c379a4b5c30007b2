"""The `dsh` command: plugin listing and versions (the full CLI is tested through a pty)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dsh
import dsh.plugins
from dsh.cli import main


def only_plugin(monkeypatch: pytest.MonkeyPatch, name: str, plugin: object) -> None:
    """Make the command's plugin manager hold ``plugin`` and no entry point.

    The command imports ``create_plugin_manager`` from dsh.plugins when it runs, so that
    is what is patched; dsh.harness is imported first, since a harness module imported
    under the patch would keep the lambda for every later test in the process."""
    import dsh.harness

    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kw: real([(name, plugin)], **(kw | {"load_entry_points": False})),
    )


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


def test_plugins_is_a_table_with_a_header(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "HOOKS"]
    assert lines[1].split(None, 3) == [
        "dsh.builtins",
        "dsh-core",
        dsh.__version__,
        lines[1].split(None, 3)[3],
    ]
    assert len(lines) == 3


def test_chat_help_names_the_slash_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "/help lists the commands (/queue TEXT, /compact, /resume ID, /plugins, /model" in out


def test_unknown_plugin_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["-p", "no-such-plugin", "plugins"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: -p no-such-plugin: no plugin named no-such-plugin")
    assert "Traceback" not in err


def test_version_matches_distribution_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert version("dsh-core") == dsh.__version__
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"dsh-core {dsh.__version__}"


def test_plugins_add_commands_and_async_ones_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:

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

    only_plugin(monkeypatch, "greeter", Greeter())
    assert main(["greet", "world"]) == 3
    assert capsys.readouterr().out == "hello world\n"


@pytest.mark.parametrize(
    ("models", "where", "reason"),
    [
        (
            "  m:\n    provider: opnai\n",
            "3:5: models.m.provider",
            "unknown provider 'opnai' (built in: ",  # then the list, and the near miss:
        ),
        ("  m:\n    provider: opnai\n", "3:5: models.m.provider", "; did you mean 'openai'?"),
        ("  m:\n    provider: openai-compatible\n", "2:3: models.m.base_url", "needs a base_url"),
    ],
)
def test_config_check_builds_the_models_as_a_harness_would(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], models: str, where: str, reason: str
) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text("models:\n" + models)
    assert main(["-c", str(path), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dsh: {path}:{where}: ") and reason in err


def test_config_check_accepts_a_model_only_a_plugin_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh import hookimpl
    from dsh.testing import ScriptedModel

    path = tmp_path / "dsh.yml"
    path.write_text("models:\n  custom:\n    provider: in-house\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["-c", str(path), "config", "check"]) == 1  # nothing serves it
    assert "unknown provider 'in-house'" in capsys.readouterr().err

    class InHouse:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(ScriptedModel([]), "custom")

    only_plugin(monkeypatch, "in-house", InHouse())
    assert main(["-c", str(path), "config", "check"]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


def test_config_check_prints_every_problem_and_run_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    path = tmp_path / "dsh.yml"
    path.write_text(
        "models:\n  m: {provider: x, timeout: 0}\n"
        "agents:\n  - id: a\n    max_steps: 0\n  - id: b\n    queue_mode: fifo\n"
    )
    assert main(["-c", str(path), "config", "check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"dsh: {path}:2:20: models.m.timeout: Input should be greater than 0",
        f"dsh: {path}:5:5: agents[0].max_steps: Input should be greater than 0",
        f"dsh: {path}:7:5: agents[1].queue_mode: Input should be 'batch' or 'one-at-a-time'",
        f"dsh: 3 problems in {path}",
    ]
    assert main(["-c", str(path), "run", "hi"]) == 2
    assert capsys.readouterr().err == (
        f"dsh: error: {path}:2:20: models.m.timeout: Input should be greater than 0 "
        f"(2 more problems in the file); `dsh -c {path} config check` lists them all\n"
    )
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dsh.yml").write_text(path.read_text())
    assert main(["run", "hi"]) == 2  # found, not named: the command to give has no -c
    assert capsys.readouterr().err.endswith(
        "(2 more problems in the file); `dsh config check` lists them all\n"
    )


def test_config_check_prints_every_model_it_cannot_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    path = tmp_path / "dsh.yml"
    path.write_text("models:\n  a: {provider: opnai}\n  b: {provider: openai-compatible}\n")
    assert main(["-c", str(path), "config", "check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[2] for line in err[:2]] == ["models.a.provider", "models.b.base_url"]
    assert err[2] == f"dsh: 2 problems in {path}"


def test_a_command_of_a_plugin_not_loaded_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dsh.plugins, "installed_plugins", lambda: [("mine", "dsh-mine", "1")])
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    assert main(["hello"]) == 2  # whose command it is cannot be told without loading
    assert capsys.readouterr().err == (
        "dsh: error: no command 'hello': the commands of plugins that are not loaded "
        "are missing (not loaded: mine)\n"
    )
    monkeypatch.setattr(dsh.plugins, "installed_plugins", list)  # only dsh-core
    assert main(["sessions", "list"]) == 2  # was argparse's "invalid choice: 'sessions'"
    assert capsys.readouterr().err == (
        "dsh: error: no command 'sessions': it comes from dsh-persistence, which is not installed\n"
    )
    with pytest.raises(SystemExit):  # a word no plugin of dsh's makes a command: argparse's
        main(["sesions", "list"])
    assert "invalid choice: 'sesions'" in capsys.readouterr().err


@pytest.mark.parametrize("with_config", [True, False])
def test_config_check_starts_the_plugins_for_their_own_checks(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    with_config: bool,
) -> None:
    from dsh import DshError, hookimpl

    class Picky:
        @hookimpl
        def harness_started(self) -> None:
            raise DshError("/nowhere/audit.log (audit.log_path) cannot be written")

    only_plugin(monkeypatch, "audit", Picky())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSH_CONFIG", raising=False)
    if with_config:
        (tmp_path / "dsh.yml").write_text("models: {}\n")
    assert main(["config", "check"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.endswith(
        "dsh: /nowhere/audit.log (audit.log_path) cannot be written (plugin 'audit')\n"
    )


@pytest.mark.parametrize("command", ["run", "chat"])
def test_c_after_run_or_chat_says_where_it_goes_and_what_continues(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, "-c", "what next?"]) == 2
    assert capsys.readouterr().err == (
        f"dsh: error: {command}: -c is dsh's option for the config file and goes before the "
        f"command (dsh -c FILE {command} ...); to go on with the last session, use --continue\n"
    )
