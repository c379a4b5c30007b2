"""A plugin command whose error quotes a model API key (a provider's, or the variable an
entry of dsh.yml's ``models:`` names): the ``dsh`` command prints it as ``***``, in its
one line and in the traceback of ``-v`` (core/src/dsh/cli.py _fail, _run), though no
key was read before the command failed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import dsh

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more
OWN = "own-key-0123456789abcdefghijklmnopqrstuvwxyz"  # in $OWN_KEY, named by dsh.yml

LEAKY_PLUGIN = """
import os

from dsh import hookimpl
from dsh.commands import Command
from dsh.errors import DshError


def _boom(context):
    key = os.environ[context.args.variable]
    if context.args.mode == "runtime":
        raise RuntimeError(f"upstream refused token {key}")
    raise DshError(f"upstream refused token {key}")


def _configure(parser):
    parser.add_argument("mode")
    parser.add_argument("variable")


@hookimpl
def register_commands(register):
    register(Command("leaky", "a command that fails quoting a key", _boom, _configure))
"""


def installed(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the plugin ``leaky`` installed (a dist-info on PYTHONPATH) and the
    keys set."""
    site = tmp_path / "site"
    info = site / "dsh_leaky-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_leaky.py").write_text(LEAKY_PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-leaky\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nleaky = dsh_leaky\n")
    path = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return {
        **env,
        "PYTHONPATH": path,
        "OPENAI_API_KEY": KEY,
        "OWN_KEY": OWN,
        "DSH_LOAD_PLUGINS": "leaky",
    }


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "OWN_KEY"])
@pytest.mark.parametrize("mode", ["runtime", "dsh"])
@pytest.mark.parametrize("verbose", [[], ["-v"]], ids=["plain", "verbose"])
def test_a_plugin_commands_error_shows_a_key_as_stars(
    cli_env: dict[str, str], tmp_path: Path, variable: str, mode: str, verbose: list[str]
) -> None:
    (tmp_path / "dsh.yml").write_text(
        "models:\n  mine: {provider: openai-compatible, model: m, base_url: "
        "'http://127.0.0.1:9/v1', api_key_env: OWN_KEY}\n"
    )
    env = installed(tmp_path, cli_env)
    done = dsh(*verbose, "leaky", mode, variable, env=env, cwd=tmp_path)
    assert done.returncode == (1 if mode == "runtime" else 2), done.stderr
    assert "upstream refused token ***" in done.stderr
    assert ("Traceback" in done.stderr) == bool(verbose)
    for key in (KEY, OWN):
        assert key not in done.stderr
        assert key[:24] not in done.stderr and key[-24:] not in done.stderr


def test_a_key_named_by_the_config_given_with_c_is_hidden(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere.yml"
    other.write_text("models:\n  mine: {provider: openai, model: m, api_key_env: OWN_KEY}\n")
    env = installed(tmp_path, cli_env)
    done = dsh("-c", str(other), "leaky", "runtime", "OWN_KEY", env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "upstream refused token ***" in done.stderr and OWN not in done.stderr
