"""``python -m dsh.cli`` and ``python -m dsh`` interrupted with Ctrl-C while dsh is
imported say ``dsh: interrupted`` and exit 130, as the ``dsh`` command does
(test_cli_start_interrupt_import.py), not with Python's KeyboardInterrupt traceback.

An import hook in a ``sitecustomize`` on the child's path stops it as it imports
STOP_AT; the test then sends it SIGINT, as Ctrl-C at a terminal does
(start_interrupt_support)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from start_interrupt_support import STOP_HOOK, interrupted_at


@pytest.mark.parametrize("module", ["dsh.cli", "dsh"])
@pytest.mark.parametrize(
    # dsh's first modules (the package imports none) and the command line's: before dsh
    # catches a Ctrl-C; pluggy and the plugins' loader, imported after it does
    "stop_at",
    ["dsh.errors", "pluggy", "dsh._cli_args", "dsh._cli_plugins"],
)
def test_ctrl_c_as_python_m_dsh_starts_says_interrupted(
    cli_env: dict[str, str], tmp_path: Path, module: str, stop_at: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STOP_HOOK)
    path = os.pathsep.join(p for p in (str(site), cli_env.get("PYTHONPATH")) if p)
    env = {**cli_env, "PYTHONPATH": path}
    status, err = interrupted_at(stop_at, [sys.executable, "-m", module, "version"], env, tmp_path)
    assert err == "dsh: interrupted\n"  # no traceback
    assert status == 130  # not -2: ended by the signal
