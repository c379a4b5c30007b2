"""``harness.agents.load_stored`` (and so ``resume``) without a plugin that stores
sessions: when persistence is installed but was left out on purpose, the error names
the switch that did it, spelt as a Python caller gives it, instead of "install
dsh-persistence" (which it is). The same reasons as ``dsh run --continue`` gives
(tests/cli/test_run_continue.py), from ``dsh._no_store``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dsh import DshError
from dsh.harness import Harness
from dsh.plugins import create_plugin_manager


async def why(tmp_path: Path, env: Mapping[str, str], **kwargs: Any) -> str:
    async with Harness(config_text="", env=env, workspace=tmp_path, **kwargs) as harness:
        with pytest.raises(DshError) as info:
            await harness.agents.load_stored("gone")
    text = str(info.value)
    assert text.startswith("cannot resume session 'gone': no persistence plugin is loaded (")
    return text


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize(
    ("env", "kwargs", "reason"),
    [
        (
            {},
            {"select": ["no:persistence"]},
            "dsh-persistence is installed but disabled by select=['no:persistence']; "
            "leave that out",
        ),
        pytest.param(
            {"DSH_LOAD_PLUGINS": "compaction"},
            {},
            "dsh-persistence is installed but DSH_LOAD_PLUGINS=compaction leaves it out; "
            "add persistence to it, or give select=['persistence']",
            marks=pytest.mark.plugins("compaction"),
        ),
        (
            {"DSH_LOAD_PLUGINS": ""},
            {},
            "dsh-persistence is installed but DSH_LOAD_PLUGINS, empty, leaves it out",
        ),
        (
            {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"},
            {},
            "dsh-persistence is installed but DSH_DISABLE_PLUGIN_AUTOLOAD loads only what "
            "select names; give select=['persistence']",
        ),
        (
            {},
            {"load_entry_points": False},
            "dsh-persistence is installed but its entry point is not loaded "
            "(load_entry_points=False)",
        ),
    ],
)
async def test_persistence_left_out_on_purpose_is_named_not_install_it(
    tmp_path: Path, env: dict[str, str], kwargs: dict[str, Any], reason: str
) -> None:
    text = await why(tmp_path, env, **kwargs)
    assert reason in text
    assert "install dsh-persistence" not in text


async def test_persistence_not_installed_says_to_install_it(tmp_path: Path) -> None:
    pm = create_plugin_manager(load_entry_points=False)
    pm.installed = {}  # a manager that knows of no installed plugin
    text = await why(tmp_path, {}, pm=pm)
    assert text.endswith(  # not "or enable it with select=['persistence']": no use then
        "(dsh-persistence is not installed; install it to store and continue sessions)"
    )


def test_the_agent_registry_reads_no_private_attribute_of_the_harness() -> None:
    """_agents.py (and _resume.py, which loads and seeds a resumed session for it) uses
    what the harness gives the registry (its ``env`` among them), not the harness's
    private attributes (``self._harness._env``, ``harness._x``)."""
    import ast

    import dsh._agents
    import dsh._resume

    def is_harness(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "_harness") or (
            isinstance(node, ast.Name) and node.id == "harness"
        )

    read = [
        ast.unparse(node)
        for module in (dsh._agents, dsh._resume)
        for node in ast.walk(ast.parse(Path(module.__file__ or "").read_text()))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and is_harness(node.value)
    ]
    assert read == []
