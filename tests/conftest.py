from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["dsh.testing"]


@pytest.fixture(autouse=True, scope="session")
def _sessions_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An installed persistence plugin stores sessions in a temp dir, never in $HOME
    (nor in a directory the developer's own DSH_PERSISTENCE_DIR names)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path_factory.mktemp("dsh-sessions")))
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``@pytest.mark.plugins("a", ...)``: skip unless those dsh plugins are installed."""
    installed = {ep.name for ep in entry_points(group="dsh")}
    for item in items:
        for marker in item.iter_markers("plugins"):
            missing = [name for name in marker.args if name not in installed]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs dsh plugins: {', '.join(missing)}"))
