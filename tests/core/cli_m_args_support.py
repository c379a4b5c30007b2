"""Shared by the command-line mutation tests (test_cli_m_args_*.py): ``_quiet_env``, an
autouse fixture each of them imports, clears the environment `dsh` reads and runs in a
directory of its own; ``Install`` is the type of conftest's ``with_plugins`` fixture.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

Install = Callable[..., None]


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name == "DSH_CONFIG":
            monkeypatch.delenv(name)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
