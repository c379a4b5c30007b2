"""`dsh config check` hides the model API keys in what it prints, as `dsh run` does
(core/src/dsh/cli.py _write): a config error quoting a value that is a key, and a
plugin's start-up failure quoting one (core/src/dsh/_cli_agent.py check_config,
_plugins_start). Was: both printed in the clear."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import dsh

KEY = "sk-test-Qw3rTy7uI9oP1aS2dF4gH6jK8lZ0xC5vB7nM9q1W"  # a built-in provider's variable
OWN = "gw-live-Zx81Lm02Nq93Rp74St65Uv46Wx37Yz28Ab19"  # in $OWN_KEY, dsh.yml's api_key_env
MODEL = (
    "models:\n  gw: {provider: openai-compatible, model: m, base_url: "
    "'http://127.0.0.1:9/v1', api_key_env: OWN_KEY}\nmodel: gw\n"
)

FAILING = """
import os

from dsh import hookimpl


@hookimpl
def harness_started(harness):
    raise RuntimeError(f"audit refused {os.environ['OPENAI_API_KEY']} / {os.environ['OWN_KEY']}")
"""


def _env(cli_env: dict[str, str], tmp_path: Path, load: str = "") -> dict[str, str]:
    """``cli_env`` with the keys set and, loaded by ``load``, the plugin ``failing`` (a
    dist-info on PYTHONPATH) whose ``harness_started`` raises quoting them."""
    site = tmp_path / "site"
    info = site / "dsh_failing-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_failing.py").write_text(FAILING)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-failing\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nfailing = dsh_failing\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    keys = {"OPENAI_API_KEY": KEY, "OWN_KEY": OWN}
    return {**cli_env, **keys, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": load}


def _hidden(text: str) -> None:
    for key in (KEY, OWN):
        assert key[:24] not in text and key[-24:] not in text, text


@pytest.mark.parametrize("key", [KEY, OWN], ids=["provider key", "api_key_env"])
def test_a_config_error_quoting_a_key_shows_it_as_stars(
    cli_env: dict[str, str], tmp_path: Path, key: str
) -> None:
    (tmp_path / "dsh.yml").write_text(MODEL + f"agents:\n  - id: main\n    model: {key}\n")
    done = dsh("config", "check", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 1
    # a key-like name is not quoted at all (tests/core/test_config_model_key.py)
    assert "agents[0].model: unknown model (the name given looks like an API key" in done.stderr
    _hidden(done.stdout + done.stderr)


def test_several_config_errors_each_show_a_key_as_stars(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(
        MODEL + f"agents:\n  - id: main\n    model: {KEY}\n  - id: b\n    model: {OWN}\n"
    )
    done = dsh("config", "check", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("unknown model (the name given looks like an API key") == 2
    _hidden(done.stdout + done.stderr)


def test_a_dsh_config_naming_a_key_shows_it_as_stars(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**_env(cli_env, tmp_path), "DSH_CONFIG": str(tmp_path / KEY)}
    done = dsh("config", "check", env=env, cwd=tmp_path)
    assert done.returncode == 1 and "DSH_CONFIG=" in done.stderr, done.stderr
    _hidden(done.stdout + done.stderr)


@pytest.mark.parametrize("config", [MODEL, None], ids=["dsh.yml", "no dsh.yml"])
def test_a_plugins_start_up_failure_quoting_keys_shows_them_as_stars(
    cli_env: dict[str, str], tmp_path: Path, config: str | None
) -> None:
    if config is not None:
        (tmp_path / "dsh.yml").write_text(config)
    done = dsh("config", "check", env=_env(cli_env, tmp_path, "failing"), cwd=tmp_path)
    assert done.returncode == 1
    assert "failed in hook harness_started" in done.stderr, done.stderr
    shown = "***" if config is not None else OWN  # no dsh.yml names $OWN_KEY
    assert f"RuntimeError: audit refused *** / {shown}" in done.stderr
    _hidden(done.stdout + done.stderr if config is not None else done.stderr.replace(OWN, ""))
