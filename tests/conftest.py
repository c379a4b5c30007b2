from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytest_plugins = ["dsh.testing"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``@pytest.mark.plugins("a", ...)``: skip unless those dsh plugins are installed."""
    installed = {ep.name for ep in entry_points(group="dsh")}
    for item in items:
        for marker in item.iter_markers("plugins"):
            missing = [name for name in marker.args if name not in installed]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs dsh plugins: {', '.join(missing)}"))
