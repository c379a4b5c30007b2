"""Entry points that cannot load as they are: a name two installed distributions define
differently (refused only where it would load, so leaving it out keeps the rest working),
and a plugin that ends the process at import (``sys.exit()``): a load failure naming it,
the others still tried."""

from __future__ import annotations

import pytest
from test_plugins import Install

from dsh import PluginLoadError, create_plugin_manager, list_plugins
from dsh.harness import Harness
from dsh.plugins import PluginManager, PluginNameClash, clashes, installed_plugins


def names(pm: PluginManager) -> list[str]:
    return [info.name for info in list_plugins(pm)]


@pytest.fixture
def clash(install: Install) -> None:
    """``dup`` from dsh-dup-one and from dsh-dup-two (different modules), and ``ok``."""
    install("dsh-dup-one", "dup", "dsh_clash_one")
    install("dsh-dup-two", "dup", "dsh_clash_two")
    install("dsh-ok", "ok", "dsh_clash_ok")


@pytest.mark.usefixtures("clash")
@pytest.mark.parametrize(
    ("select", "env"),
    [
        (["no:dup"], {}),
        ([], {"DSH_LOAD_PLUGINS": "ok"}),
        (["ok"], {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"}),
    ],
    ids=["-p no:dup", "DSH_LOAD_PLUGINS without it", "autoload off"],
)
def test_a_clashing_name_left_out_stops_nothing(select: list[str], env: dict[str, str]) -> None:
    """Was: every manager refused at discovery, before any selection, so none of the ways
    out worked."""
    loaded = names(create_plugin_manager(select=select, env=env))
    assert "ok" in loaded and "dup" not in loaded


@pytest.mark.usefixtures("clash")
def test_a_harness_can_leave_a_clashing_name_out() -> None:
    harness = Harness(select=["no:dup"], env={})
    assert harness.pm.has_plugin("ok") and not harness.pm.has_plugin("dup")


@pytest.mark.usefixtures("clash")
@pytest.mark.parametrize(
    ("select", "env"),
    [([], {}), ([], {"DSH_LOAD_PLUGINS": "dup"}), (["dup"], {"DSH_LOAD_PLUGINS": ""})],
    ids=["autoload", "DSH_LOAD_PLUGINS", "-p"],
)
def test_a_clashing_name_that_would_load_is_refused_naming_both(
    select: list[str], env: dict[str, str]
) -> None:
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(select=select, env=env)
    assert (info.value.name, info.value.more) == ("dup", ())
    assert isinstance(info.value.cause, PluginNameClash)
    assert str(info.value.cause) == (
        "two installed distributions define the dsh plugin 'dup': dsh-dup-one "
        "(dup = dsh_clash_one) and dsh-dup-two (dup = dsh_clash_two); uninstall one"
    )
    assert "disable it with `-p no:dup`" in str(info.value)
    # either may be the one to go: not the first by name alone
    assert str(info.value).endswith("or uninstall dsh-dup-one or dsh-dup-two")


@pytest.mark.usefixtures("clash")
def test_the_listings_show_each_distribution_of_a_clashing_name() -> None:
    mine = [row for row in installed_plugins() if row[0] in ("dup", "ok")]
    assert mine == [
        ("dup", "dsh-dup-one", "1.0"),
        ("dup", "dsh-dup-two", "1.0"),
        ("ok", "dsh-ok", "1.0"),
    ]
    assert clashes() == {"dup": ["dsh-dup-one", "dsh-dup-two"]}


def test_a_clash_is_named_beside_the_other_failures(install: Install) -> None:
    install("dsh-dup-one", "dup", "dsh_clash_one")
    install("dsh-dup-two", "dup", "dsh_clash_two")
    install("dsh-broken", "broken", "dsh_clash_broken", "raise ImportError('half')\n")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={"DSH_LOAD_PLUGINS": "broken,dup"})
    assert [e.name for e in (info.value, *info.value.more)] == ["broken", "dup"]


# -- a plugin that ends the process at import ------------------------------------------


@pytest.mark.parametrize(
    ("source", "cause"),
    [
        (
            "import sys\nsys.exit(3)\n",
            "SystemExit: sys.exit(3) called while loading (exit status 3)",
        ),
        (
            "import sys\nsys.exit()\n",
            "SystemExit: sys.exit(None) called while loading (exit status 0)",
        ),
        (
            "import sys\nsys.exit('bye')\n",
            "SystemExit: sys.exit('bye') called while loading (exit status 1)",
        ),
        ("raise GeneratorExit('odd')\n", "GeneratorExit: odd"),
        ("import asyncio\nraise asyncio.CancelledError()\n", "CancelledError: "),
    ],
    ids=["exit-3", "exit", "exit-message", "GeneratorExit", "CancelledError"],
)
def test_a_plugin_ending_the_process_at_import_is_a_load_failure_and_the_others_are_tried(
    install: Install, source: str, cause: str
) -> None:
    """Was: the ``SystemExit`` went through ``except Exception``: dsh ended, silently, with
    the plugin's status, and no other broken plugin was named."""
    install("dsh-aexit", "aexit", "dsh_clash_aexit", source)
    install("dsh-broken", "broken", "dsh_clash_broken", "raise ImportError('half')\n")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={"DSH_LOAD_PLUGINS": "aexit,broken"})
    assert [e.name for e in (info.value, *info.value.more)] == ["aexit", "broken"]
    assert f"failed to load: {cause}\n" in str(info.value)
    assert "(distribution dsh-aexit, entry point aexit = dsh_clash_aexit)" in str(info.value)


@pytest.mark.parametrize(
    "source",
    [
        "raise KeyboardInterrupt\n",
        "raise BaseExceptionGroup('g', [KeyboardInterrupt(), ValueError()])\n",
    ],
)
def test_ctrl_c_while_a_plugin_loads_still_stops_dsh(install: Install, source: str) -> None:
    install("dsh-slow", "slow", "dsh_clash_slow", source)
    with pytest.raises((KeyboardInterrupt, BaseExceptionGroup)):
        create_plugin_manager(env={"DSH_LOAD_PLUGINS": "slow"})
