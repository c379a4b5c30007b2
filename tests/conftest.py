from __future__ import annotations

import os
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["dsh.testing"]


def pytest_configure(config: pytest.Config) -> None:
    """The `dsh` children of the tests inherit stdin: make it empty, whatever runs the
    tests (a CI runner may hand it a pipe), so that a child never sees input its test
    did not give it. Not with ``-s``, where a debugger may need the terminal."""
    # Tests patch dsh.plugins.create_plugin_manager; dsh.harness binds it at import, so a
    # harness module first imported under a patch would keep the patched one for every
    # later test of the process. Imported here, it binds the real one in every worker.
    import dsh.harness  # noqa: F401

    if config.getoption("capture") != "no":
        empty = os.open(os.devnull, os.O_RDONLY)
        os.dup2(empty, 0)
        os.close(empty)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``@pytest.mark.plugins("a", ...)``: skip unless those dsh plugins are installed."""
    installed = {ep.name for ep in entry_points(group="dsh")}
    for item in items:
        for marker in item.iter_markers("plugins"):
            missing = [name for name in marker.args if name not in installed]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs dsh plugins: {', '.join(missing)}"))
