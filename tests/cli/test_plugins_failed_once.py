"""`dsh plugins` beside an installed plugin whose import raises: the failure is said
once, in the plugin's row (its name and the reason), not also as a warning on stderr."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_support import dsh

REASON = "RuntimeError: the broken plugin cannot start"


def _env(cli_env: dict[str, str], site: Path) -> dict[str, str]:
    """``cli_env`` with dsh-broken 1.0 installed (entry point ``broken``), loaded alone."""
    info = site / "dsh_broken-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_broken.py").write_text("raise RuntimeError('the broken plugin cannot start')\n")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nbroken = dsh_broken\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "broken"}


def test_plugins_says_a_plugin_that_failed_to_load_once(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = _env(cli_env, tmp_path / "site")
    done = dsh("plugins", env=env, cwd=tmp_path)
    assert done.returncode == 1
    rows = [line for line in done.stdout.splitlines() if line.startswith("broken ")]
    assert len(rows) == 1 and rows[0].endswith(f"failed to load: {REASON}"), done.stdout
    assert (done.stdout + done.stderr).count(REASON) == 1, done.stderr
    listed = dsh("plugins", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 1
    assert [r["error"] for r in json.loads(listed.stdout) if r["name"] == "broken"] == [REASON]
    assert REASON not in listed.stderr, listed.stderr


def test_plugins_help_beside_a_broken_plugin_still_warns(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """No listing follows help: the warning is the only place the failure is said."""
    done = dsh("plugins", "--help", env=_env(cli_env, tmp_path / "site"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(REASON) == 1, done.stderr
