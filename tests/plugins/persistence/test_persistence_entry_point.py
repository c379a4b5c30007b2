"""The ``dsh_persistence`` module as the ``persistence`` entry point registers it."""

from __future__ import annotations

import pytest

import dsh_persistence
from dsh_persistence import PersistencePlugin

pytestmark = pytest.mark.plugins("persistence")


def test_the_entry_point_module_exports_every_hook_impl_of_the_plugin() -> None:
    """The ``persistence`` entry point registers the module, whose names stand for its
    ``plugin`` instance: a hook impl of the class missing there never runs for a user
    of ``dsh`` (agent_created was: the header's cwd was the process's directory)."""
    from dsh.hookspecs import hookimpl

    marker = f"{hookimpl.project_name}_impl"
    impls = {
        name
        for name, value in vars(PersistencePlugin).items()
        if callable(value) and hasattr(value, marker)
    }
    assert "agent_created" in impls
    exported = {name for name in impls if getattr(dsh_persistence, name, None) is not None}
    assert exported == impls
    for name in impls:
        assert getattr(dsh_persistence, name).__self__ is dsh_persistence.plugin
