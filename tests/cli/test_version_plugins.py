"""`dsh version -v` and help beside an installed plugin whose import raises: the broken
plugin is left out and named with its error; the other plugins load as they would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import dsh

# persistence is loaded beside them (DSH_LOAD_PLUGINS below), as a plugin that works
pytestmark = pytest.mark.plugins("persistence")

GOOD = """\
from dsh import hookimpl


@hookimpl
def register_commands(register):
    from dsh.commands import Command

    register(Command("hello", "say hello", lambda context: print("hello")))
"""


def _install(site: Path, name: str, source: str) -> None:
    """A real distribution ``dsh-NAME`` 1.0 (a dist-info in ``site``) with the entry point
    ``NAME = dsh_NAME``."""
    info = site / f"dsh_{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"dsh_{name}.py").write_text(source)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dsh-{name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[dsh]\n{name} = dsh_{name}\n")


def _env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    _install(site, "broken", "raise RuntimeError('the broken plugin cannot start')\n")
    _install(site, "good", GOOD)
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "broken,good,persistence"}


def test_version_v_marks_only_the_plugin_that_failed_and_names_its_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("version", "-v", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "dsh-broken 1.0 (plugin broken, failed to load: RuntimeError: the broken plugin "
        "cannot start)" in lines
    )
    assert "dsh-good 1.0 (plugin good)" in lines
    assert any(
        line.startswith("dsh-persistence ") and "(plugin persistence)" in line for line in lines
    )
    # every other installed plugin (compaction, in the sets that have it) is left out
    loaded = ("(plugin broken,", "(plugin good)", "(plugin persistence)")
    others = [line for line in lines if "(plugin " in line and not any(x in line for x in loaded)]
    assert all(line.endswith(", not loaded)") for line in others), others
    assert done.stderr.startswith("dsh: warning: plugin 'broken' (distribution dsh-broken")
    assert done.stderr.endswith("dsh: (left out: broken)\n")


def test_help_beside_a_broken_plugin_lists_the_other_plugins_commands(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("--help", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout and "sessions" in done.stdout
    assert done.stderr.endswith("dsh: (left out: broken)\n")


def test_other_commands_still_stop_at_the_broken_plugin(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("hello", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("dsh: error: plugin 'broken' (distribution dsh-broken")


def test_dash_dash_version_prints_what_dsh_version_does(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """`dsh --version`, the first thing many type, was "unrecognized arguments"; it works
    beside a broken plugin as `dsh version` does, and `dsh --help` lists it."""
    env = _env(cli_env, tmp_path)
    version = dsh("version", env=env, cwd=tmp_path)
    done = dsh("--version", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, version.stdout)
    assert done.stdout.startswith("dsh-core ") and done.stdout.count("\n") == 1
    assert done.stderr.endswith("dsh: (left out: broken)\n")
    listed = dsh("--help", env=env, cwd=tmp_path).stdout
    assert "  --version " in listed and "as dsh version" in listed
