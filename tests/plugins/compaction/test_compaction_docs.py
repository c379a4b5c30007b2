"""docs/compaction.md documents every hook (with its real signature), every setting and
every event of the plugin; the plugin loads as ``compaction`` from dsh-compaction."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import dsh_compaction
from dsh import create_plugin_manager, list_plugins
from dsh_compaction import CompactionSettings, hookspecs

pytestmark = pytest.mark.plugins("compaction")

DOC = (Path(__file__).parents[3] / "docs" / "compaction.md").read_text(encoding="utf-8")


def test_every_hook_is_documented_with_its_signature() -> None:
    documented = dict(re.findall(r"^### `(\w+)\(([^)]*)\)`", DOC, re.MULTILINE))
    specs = {
        name: ", ".join(inspect.signature(function).parameters)
        for name, function in vars(hookspecs).items()
        if name.startswith("compaction_")
    }

    assert documented == specs


def test_every_setting_is_documented() -> None:
    rows = set(re.findall(r"^\| `(\w+)` \|", DOC, re.MULTILINE))

    assert set(CompactionSettings.model_fields) <= rows


@pytest.mark.parametrize(
    "event", ["compact/start", "compact/prune", "compact/summary", "compact/end"]
)
def test_every_event_is_documented(event: str) -> None:
    assert f"| `{event}` |" in DOC


def test_the_plugin_loads_from_its_entry_point() -> None:
    pm = create_plugin_manager(select=["compaction"], env={"DSH_LOAD_PLUGINS": ""})

    (info,) = [i for i in list_plugins(pm) if i.name == "compaction"]
    assert info.distribution == "dsh-compaction"
    assert pm.get_plugin("compaction") is dsh_compaction
    assert {"agent_request", "agent_request_error", "register_history_reducers"} <= set(info.hooks)
    # its own hooks are known to the manager, so other plugins can implement them
    assert pm.hook.compaction_summarize.spec is not None
