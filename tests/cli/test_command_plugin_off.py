"""A command of one of dsh's own plugins that is installed but does not run (``dsh
sessions`` with dsh-persistence left out) names the plugin and the switch that left it
out, and how to turn it on, rather than only listing the plugins that are not loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize(
    ("switch", "said"),
    [
        (
            {"DSH_LOAD_PLUGINS": "persistence", "select": "no:persistence"},
            "dsh-persistence is installed but disabled by -p no:persistence; leave that out",
        ),
        (
            {"DSH_LOAD_PLUGINS": ""},
            "dsh-persistence is installed but DSH_LOAD_PLUGINS, empty, leaves it out; add "
            "persistence to it, or give -p persistence",
        ),
        pytest.param(
            {"DSH_LOAD_PLUGINS": "compaction"},
            "dsh-persistence is installed but DSH_LOAD_PLUGINS=compaction leaves it out; add "
            "persistence to it, or give -p persistence",
            marks=pytest.mark.plugins("compaction"),
        ),
        (
            {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"},
            "dsh-persistence is installed but DSH_DISABLE_PLUGIN_AUTOLOAD loads only what -p "
            "names; give -p persistence",
        ),
    ],
    ids=["blocked", "load-none", "load-others", "autoload-off"],
)
def test_sessions_with_persistence_left_out_names_the_plugin_and_the_way_to_turn_it_on(
    cli_env: dict[str, str], tmp_path: Path, switch: dict[str, str], said: str
) -> None:
    env = {k: v for k, v in cli_env.items() if k != "DSH_LOAD_PLUGINS"}
    env.update({k: v for k, v in switch.items() if k != "select"})
    select = ["-p", switch["select"]] if "select" in switch else []
    done = dsh(*select, "sessions", "list", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"dsh: error: no command 'sessions': it comes from plugin 'persistence'; {said}\n"
    )
