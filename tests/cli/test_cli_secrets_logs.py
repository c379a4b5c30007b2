"""What the ``dsh`` command's logging prints on stderr (warnings and errors, tracebacks
with ``-v``) when a plugin fails quoting the model API key (a study): the dispatcher's
report of a failed hook, a plugin's own logger, and the config's warnings. Each test
follows one path; the logs of library use are in tests/core/test_secrets_study_logs.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more

STATUS_PLUGIN = """
import logging
import os

from dsh import hookimpl

log = logging.getLogger("dsh_status")


def refused():
    return ConnectionError(f"status service refused token {os.environ['OPENAI_API_KEY']}")


@hookimpl
def agent_created(agent, source):
    raise refused()  # contained and reported by the dispatcher (dsh.plugins)


@hookimpl
def agent_status(agent, status):
    try:
        raise refused()
    except ConnectionError:
        log.exception("dsh-status: reporting %s failed", status)  # its own logger
"""


def installed(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the plugin ``status`` installed (a dist-info on PYTHONPATH)."""
    site = tmp_path / "site"
    info = site / "dsh_status-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_status.py").write_text(STATUS_PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-status\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nstatus = dsh_status\n")
    path = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return {**env, "PYTHONPATH": path, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "status"}


@pytest.mark.parametrize("verbose", [[], ["-v"]], ids=["plain", "verbose"])
def test_a_plugins_failures_quoting_the_key_are_printed_with_it_hidden(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, verbose: list[str]
) -> None:
    """Leak paths: a plugin's hook raises quoting the key (the dispatcher's report on
    dsh.plugins), and a plugin logs its own failure with the traceback on its own
    logger (dsh_status) -> stderr, and with -v the tracebacks."""
    server = model_server([text_reply("ok")])
    env = installed(tmp_path, cli_env)
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh(*verbose, "-m", model, "run", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "failed in hook agent_created" in done.stderr
    assert "dsh: dsh-status: reporting running failed" in done.stderr
    assert ("Traceback" in done.stderr) == bool(verbose)
    assert "refused token ***" in done.stderr
    assert KEY not in done.stderr
    assert KEY[:24] not in done.stderr and KEY[-24:] not in done.stderr


@pytest.mark.plugins("permissions")
def test_a_turned_off_plugins_section_is_warned_about_without_its_values(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Path (safe): a section of a plugin turned off with -p no:NAME, holding a token
    written into dsh.yml -> the config's warning names the place only
    (core/src/dsh/_config_validate.py:98)."""
    token = "tok-in-config-0123456789abcdef"
    (tmp_path / "dsh.yml").write_text(f"permissions:\n  allow: ['bash(curl -H \"{token}\")']\n")
    server = model_server([text_reply("ok")])
    env = {**cli_env, "OPENAI_API_KEY": KEY}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-v", "-p", "no:permissions", "-m", model, "run", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "permissions is ignored: plugin 'permissions' is turned off" in done.stderr
    assert token not in done.stderr and KEY not in done.stderr
