"""One distribution, several plugins (entry points ``walk_budget = dsh_walkdist.budget``
and ``walk_lookup = dsh_walkdist.lookup``), as third-party packages often ship them: each
is a plugin of its own, and settings for one that this run leaves out
(``DSH_LOAD_PLUGINS``) are refused, config.md says, "since nothing would apply it". The
tests install the distribution for real, a dist-info directory on ``sys.path``, and
load only some of its plugins."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh import ConfigError, create_plugin_manager
from dsh.harness import Harness

BUDGET = """
from dsh import hookimpl
from walkthrough_plugins import BudgetSettings


@hookimpl
def register_settings(register):
    register(BudgetSettings)
"""

LOOKUP = """
from walkthrough_plugins import Lookup

register_tools = Lookup().register_tools
"""

OPTIONS = "agents:\n  - id: main\n    options: {walk_budget: {max_tool_calls: 1}}\n"
SECTION = "walk_budget: {max_tool_calls: 1}\n"
REFUSED = {
    OPTIONS: (
        "<string>:3:15: agents[0].options.walk_budget: plugin 'walk_budget' is installed "
        "but not loaded, so nothing would apply these settings: load it (DSH_LOAD_PLUGINS, "
        "-p walk_budget) or remove them"
    ),
    SECTION: (
        "<string>:1:1: walk_budget: section 'walk_budget' is for plugin 'walk_budget', which "
        "is installed but not loaded: load it (DSH_LOAD_PLUGINS, -p walk_budget) or remove "
        "the section"
    ),
}
WHERE = pytest.mark.parametrize("config", [OPTIONS, SECTION], ids=["options", "section"])


@pytest.fixture
def walkdist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dsh-walkdist installed in a directory on sys.path, as pip would leave it."""
    package = tmp_path / "dsh_walkdist"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "budget.py").write_text(BUDGET)
    (package / "lookup.py").write_text(LOOKUP)
    info = tmp_path / "dsh_walkdist-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-walkdist\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[dsh]\nwalk_budget = dsh_walkdist.budget\nwalk_lookup = dsh_walkdist.lookup\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("dsh_walkdist", "dsh_walkdist.budget", "dsh_walkdist.lookup"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)


async def check(load: str, config: str) -> None:
    pm = create_plugin_manager(env={"DSH_LOAD_PLUGINS": load})
    async with Harness(pm=pm, config_text=config, workspace="."):
        pass


@WHERE
@pytest.mark.usefixtures("walkdist")
async def test_settings_for_a_left_out_plugin_are_refused(config: str) -> None:
    """config.md, agents[].options: "A key named after a plugin that is installed but not
    loaded (left out by DSH_LOAD_PLUGINS) is refused too"; a section: "for a plugin that
    is installed but left out of the run (`DSH_LOAD_PLUGINS`), it says so"."""
    with pytest.raises(ConfigError) as refused:
        await check("", config)
    assert refused.value.problem == REFUSED[config]


@WHERE
@pytest.mark.usefixtures("walkdist")
async def test_they_are_refused_when_a_sibling_plugin_of_the_package_is_loaded(
    config: str,
) -> None:
    """The same settings, with the other plugin of the same distribution loaded."""
    with pytest.raises(ConfigError) as refused:
        await check("walk_lookup", config)
    assert refused.value.problem == REFUSED[config]


@pytest.mark.usefixtures("walkdist")
def test_each_entry_point_of_one_distribution_is_a_plugin_of_its_own() -> None:
    """writing-plugins.md: "One distribution may ship several plugins, one entry point
    each ...: each is a plugin of its own, with its own name, row in `dsh plugins`,
    `dsh.yml` section and `-p` switch"."""
    from dsh.plugins import list_plugins

    pm = create_plugin_manager(env={"DSH_LOAD_PLUGINS": "walk_budget,walk_lookup"})
    rows = {info.name: info for info in list_plugins(pm)}
    assert rows["walk_budget"].hooks == ("register_settings",)
    assert rows["walk_lookup"].hooks == ("register_tools",)
    assert {rows[n].distribution for n in ("walk_budget", "walk_lookup")} == {"dsh-walkdist"}
    blocked = create_plugin_manager(
        select=["no:walk_lookup"], env={"DSH_LOAD_PLUGINS": "walk_budget,walk_lookup"}
    )
    loaded = [n for n, p in blocked.list_name_plugin() if p is not None and n.startswith("walk_")]
    assert loaded == ["walk_budget"]
