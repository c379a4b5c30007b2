"""Persistence tests: not collected at all when dsh-persistence is not installed.

``settings`` runs a test once per backend, each in its own temp directory.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

if find_spec("dsh_persistence") is None:
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(params=["jsonl", "sqlite"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    from dsh_persistence import PersistenceSettings

    return PersistenceSettings(backend=request.param, directory=tmp_path / "sessions")
