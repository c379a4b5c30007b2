"""Fixtures shared by the core's test modules."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

NO_OP_SOURCE = """
from dsh import hookimpl

@hookimpl
def agent_request(request):
    return None
"""


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Install a real (dist-info on sys.path) distribution with a `dsh` entry point."""
    monkeypatch.syspath_prepend(str(tmp_path))
    modules: list[str] = []

    def install(
        dist: str,
        ep_name: str,
        module: str,
        source: str = NO_OP_SOURCE,
        version: str = "1.0",
        attr: str = "",
    ) -> None:
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        target = f"{module}:{attr}" if attr else module  # a module, or something in one
        (info / "entry_points.txt").write_text(f"[dsh]\n{ep_name} = {target}\n")
        modules.append(module)

    yield install
    for module in modules:
        sys.modules.pop(module, None)
