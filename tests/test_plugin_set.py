"""The plugin set a nox session installed is exactly the set that loads.

nox's ``tests`` sessions install core plus one set of first-party plugins and export the
set's names in ``DSH_LOAD_PLUGINS`` and ``DSH_EXPECT_PLUGINS`` (empty for ``bare``).
Without this check a session whose plugins silently failed to install, or that picked
up stray ones, would pass while testing the wrong thing. ``DSH_LOAD_PLUGINS`` limits only
what loads, not what is installed, and the plugin tests run by what is installed
(``tests/plugins/*/conftest.py``, the ``plugins`` marker of ``tests/conftest.py``): so
the installed entry points are checked too.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import pytest

from dsh.plugins import create_plugin_manager, list_plugins


def _expected() -> list[str]:
    value = os.environ.get("DSH_EXPECT_PLUGINS")
    if value is None:
        pytest.skip("DSH_EXPECT_PLUGINS is unset; nox's tests sessions set it per plugin set")
    return sorted(name.strip() for name in value.split(",") if name.strip())


#: The example third-party plugin (examples/dsh-shout), which a development venv has
#: installed. No nox session that runs tests/ installs it (``thirdparty`` runs only the
#: example's own tests), so under nox it is a stray like any other.
EXAMPLE = ("shout", "dsh-shout")


def _installed() -> list[str]:
    """The entry-point plugins installed (group ``dsh``), but dsh-core's own."""
    found = {(ep.name, ep.dist.name if ep.dist else None) for ep in entry_points(group="dsh")}
    if not os.environ.get("NOX_CURRENT_SESSION"):  # nox sets it in every session
        found.discard(EXAMPLE)
    return sorted(name for name, dist in found if dist != "dsh-core")


def test_exactly_the_expected_entry_point_plugins_are_installed() -> None:
    expected = _expected()

    installed = _installed()

    # A stray one runs its tests (or its marked ones) although the set leaves it out.
    assert installed == expected, f"installed {installed}, DSH_EXPECT_PLUGINS {expected}"


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
