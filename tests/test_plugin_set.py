"""The plugin set a nox session installed is exactly the set that loads.

nox's ``tests`` sessions install core plus one set of first-party plugins and export the
set's names in ``DSH_LOAD_PLUGINS`` and ``DSH_EXPECT_PLUGINS`` (empty for ``bare``).
Without this check a session whose plugins silently failed to install, or that picked
up stray ones, would pass while testing the wrong thing.
"""

from __future__ import annotations

import os

import pytest

from dsh.plugins import create_plugin_manager, list_plugins


def _expected() -> list[str]:
    value = os.environ.get("DSH_EXPECT_PLUGINS")
    if value is None:
        pytest.skip("DSH_EXPECT_PLUGINS is unset; nox's tests sessions set it per plugin set")
    return sorted(name.strip() for name in value.split(",") if name.strip())


def test_exactly_the_expected_entry_point_plugins_load() -> None:
    expected = _expected()

    infos = list_plugins(create_plugin_manager())

    # Explicit plugins have no distribution and the core's defaults come from dsh-core;
    # everything else came from an entry point.
    loaded = sorted(i.name for i in infos if i.distribution not in (None, "dsh-core"))
    assert loaded == expected


def test_each_expected_plugin_comes_from_its_own_distribution() -> None:
    expected = _expected()

    infos = {i.name: i for i in list_plugins(create_plugin_manager())}

    for name in expected:
        assert name in infos, f"plugin {name!r} did not load"
        assert infos[name].distribution == f"dsh-{name}"
        assert infos[name].hooks, f"plugin {name!r} implements no dsh hook"
