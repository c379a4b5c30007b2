"""`dsh version -v` and help beside an installed plugin whose import raises: the broken
plugin is left out and named with its error; the other plugins load as they would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import dsh

# persistence is loaded beside them (DSH_LOAD_PLUGINS below), as a plugin that works
pytestmark = pytest.mark.plugins("persistence")

GOOD = """\
from dsh import hookimpl


@hookimpl
def register_commands(register):
    from dsh.commands import Command

    register(Command("hello", "say hello", lambda context: print("hello")))
"""


def _install(site: Path, name: str, source: str, dist: str = "") -> None:
    """A real distribution ``dsh-DIST`` 1.0 (a dist-info in ``site``; DIST defaults to
    NAME) with the entry point ``NAME = dsh_DIST``."""
    dist = dist or name
    info = site / f"dsh_{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"dsh_{dist}.py").write_text(source)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dsh-{dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[dsh]\n{name} = dsh_{dist}\n")


def _env(
    cli_env: dict[str, str],
    tmp_path: Path,
    broken: str = "raise RuntimeError('the broken plugin cannot start')\n",
    load: str = "broken,good,persistence",
) -> dict[str, str]:
    site = tmp_path / "site"
    _install(site, "broken", broken)
    _install(site, "good", GOOD)
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": load}


def test_version_v_marks_only_the_plugin_that_failed_and_names_its_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("version", "-v", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "dsh-broken 1.0 (plugin broken, failed to load: RuntimeError: the broken plugin "
        "cannot start)" in lines
    )
    assert "dsh-good 1.0 (plugin good)" in lines
    assert any(
        line.startswith("dsh-persistence ") and "(plugin persistence)" in line for line in lines
    )
    # every other installed plugin (compaction, in the sets that have it) is left out
    loaded = ("(plugin broken,", "(plugin good)", "(plugin persistence)")
    others = [line for line in lines if "(plugin " in line and not any(x in line for x in loaded)]
    assert all(line.endswith(", not loaded)") for line in others), others
    assert done.stderr.startswith("dsh: warning: plugin 'broken' (distribution dsh-broken")
    assert done.stderr.endswith("dsh: (left out: broken)\n")


def test_help_beside_a_broken_plugin_lists_the_other_plugins_commands(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("--help", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout and "sessions" in done.stdout
    assert done.stderr.endswith("dsh: (left out: broken)\n")


def test_other_commands_still_stop_at_the_broken_plugin(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("hello", env=_env(cli_env, tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("dsh: error: plugin 'broken' (distribution dsh-broken")


def test_dash_dash_version_prints_what_dsh_version_does(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """`dsh --version`, the first thing many type, was "unrecognized arguments"; it works
    beside a broken plugin as `dsh version` does, and `dsh --help` lists it."""
    env = _env(cli_env, tmp_path)
    version = dsh("version", env=env, cwd=tmp_path)
    done = dsh("--version", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, version.stdout)
    assert done.stdout.startswith("dsh-core ") and done.stdout.count("\n") == 1
    assert done.stderr.endswith("dsh: (left out: broken)\n")
    listed = dsh("--help", env=env, cwd=tmp_path).stdout
    assert "  --version " in listed and "as dsh version" in listed


# -- a name two distributions define; a plugin calling sys.exit() at import -------------


def _clash_env(cli_env: dict[str, str], tmp_path: Path, load: str) -> dict[str, str]:
    """``good`` and persistence as above, and ``mine`` from both dsh-mine and dsh-dup."""
    env = _env(cli_env, tmp_path, broken="", load=load)
    _install(tmp_path / "site", "mine", GOOD.replace("hello", "mine"))
    _install(tmp_path / "site", "mine", GOOD.replace("hello", "dup"), dist="dup")
    return env


@pytest.mark.parametrize(
    ("args", "changes"),
    [
        (["-p", "no:mine", "plugins"], {}),  # autoload: every other installed plugin
        (["plugins"], {"DSH_LOAD_PLUGINS": "good,persistence"}),
        (["-p", "good", "-p", "persistence", "plugins"], {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"}),
    ],
    ids=["-p no:mine", "DSH_LOAD_PLUGINS without it", "autoload off"],
)
def test_a_name_two_distributions_define_left_out_stops_nothing(
    cli_env: dict[str, str], tmp_path: Path, args: list[str], changes: dict[str, str]
) -> None:
    """Was: every command stopped at "two installed distributions define the dsh plugin
    'mine'", whichever way out was taken."""
    env = _clash_env(cli_env, tmp_path, "")
    del env["DSH_LOAD_PLUGINS"]
    done = dsh(*args, env={**env, **changes}, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    listed = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert "good" in listed and "persistence" in listed and "mine" not in listed


def test_a_name_two_distributions_define_stops_only_where_it_would_load(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = _clash_env(cli_env, tmp_path, "good,mine,persistence")
    done = dsh("tools", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "failed to load: PluginNameClash: two installed distributions define the dsh " in (
        done.stderr
    )
    assert "dsh-dup (mine = dsh_dup)" in done.stderr and "-p no:mine" in done.stderr
    # help and `dsh version -v` leave it out and load the others
    helped = dsh("--help", env=env, cwd=tmp_path)
    assert helped.returncode == 0 and "hello" in helped.stdout and "sessions" in helped.stdout
    assert helped.stderr.endswith("dsh: (left out: mine)\n")
    version = dsh("version", "-v", env=env, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    lines = version.stdout.splitlines()
    assert "dsh-dup 1.0 (plugin mine, clashing: dsh-mine defines it too; not loaded)" in lines
    assert "dsh-mine 1.0 (plugin mine, clashing: dsh-dup defines it too; not loaded)" in lines
    assert "dsh-good 1.0 (plugin good)" in lines
    # `dsh plugins` lists the others and marks the name under each distribution, status 1
    listed = dsh("plugins", env=env, cwd=tmp_path)
    assert listed.returncode == 1, listed.stderr
    rows = [line.split(None, 3) for line in listed.stdout.splitlines()[1:]]
    mine = [row[1] for row in rows if row[0] == "mine"]
    assert sorted(mine) == ["dsh-dup", "dsh-mine"]
    assert all(
        row[3].startswith("failed to load: PluginNameClash") for row in rows if row[0] == "mine"
    )
    assert "good" in [row[0] for row in rows]


def test_an_unknown_command_names_a_clashing_plugin_once_among_those_not_loaded(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = _clash_env(cli_env, tmp_path, "good,persistence")
    done = dsh("nosuch", env=env, cwd=tmp_path)
    assert done.returncode == 2
    idle = done.stderr.rpartition("(not loaded: ")[2].rstrip(")\n").split(", ")
    assert idle.count("mine") == 1 and "broken" in idle, done.stderr


def test_a_plugin_calling_sys_exit_at_import_is_named_with_the_other_failures(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Was: `dsh --help` ended with status 3 and no word, and no other broken plugin was
    named."""
    env = _env(cli_env, tmp_path, load="aexit,broken,good,persistence")
    _install(tmp_path / "site", "aexit", "import sys\nsys.exit(3)\n")
    helped = dsh("--help", env=env, cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "hello" in helped.stdout and "sessions" in helped.stdout
    assert helped.stderr.startswith(
        "dsh: warning: plugin 'aexit' (distribution dsh-aexit, entry point aexit = dsh_aexit) "
        "failed to load: SystemExit: sys.exit(3) called while loading (exit status 3)\n"
    )
    assert helped.stderr.endswith("dsh: (left out: aexit, broken)\n")
    done = dsh("hello", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "plugin 'aexit'" in done.stderr and "plugin 'broken'" in done.stderr


# -- a plugin whose import fails quoting a model API key -----------------------------

KEY = "sk-test-Qw3rTy7uI9oP1aS2dF4gH6jK8lZ0xC5vB7nM9q1W"  # a built-in provider's variable
OWN = "gw-live-Zx81Lm02Nq93Rp74St65Uv46Wx37Yz28Ab19"  # in $OWN_KEY, dsh.yml's api_key_env
QUOTING = """\
import os
raise RuntimeError(f"no token {os.environ['OPENAI_API_KEY']} / {os.environ['OWN_KEY']}")
"""


@pytest.mark.parametrize(
    "args",
    [["plugins"], ["plugins", "--json"], ["version", "-v"], ["--help"]],
    ids=["plugins", "plugins --json", "version -v", "--help"],
)
def test_a_plugin_failing_to_load_shows_the_keys_as_stars(
    cli_env: dict[str, str], tmp_path: Path, args: list[str]
) -> None:
    """Was: each printed the import's error, keys in the clear (in its warning, the
    listing and `dsh version -v`), where `dsh run` shows them as ***."""
    (tmp_path / "dsh.yml").write_text(
        "models:\n  gw: {provider: openai-compatible, model: m, base_url: "
        "'http://127.0.0.1:9/v1', api_key_env: OWN_KEY}\n"
    )
    env = {**_env(cli_env, tmp_path, broken=QUOTING), "OPENAI_API_KEY": KEY, "OWN_KEY": OWN}
    done = dsh(*args, env=env, cwd=tmp_path)
    # dsh plugins says it in its listing alone; the others warn (version -v lists it too)
    warned = done.stdout if args[0] == "plugins" else done.stderr
    assert "RuntimeError: no token *** / ***" in warned
    if args != ["--help"]:  # the listing names the error too
        assert "no token *** / ***" in done.stdout
    for key in (KEY, OWN):
        assert key[:24] not in done.stdout + done.stderr
        assert key[-24:] not in done.stdout + done.stderr
