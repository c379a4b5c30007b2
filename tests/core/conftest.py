"""Fixtures shared by the core's test modules."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture
def with_plugins(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``with_plugins(("name", plugin), ..., entry_points=False)``: `dsh` loads these
    plugins too (and the installed ones only if ``entry_points``)."""
    # dsh.harness binds create_plugin_manager when first imported: import it first
    import dsh.harness
    import dsh.plugins

    assert dsh.harness is not None
    real = dsh.plugins.create_plugin_manager

    def install(*plugins: tuple[str, object], entry_points: bool = False) -> None:
        def create(select: Any = (), load_entry_points: bool = True, **kwargs: Any) -> Any:
            return real(
                list(plugins),
                select=select,
                load_entry_points=entry_points and load_entry_points,
                **kwargs,
            )

        monkeypatch.setattr(dsh.plugins, "create_plugin_manager", create)

    return install
