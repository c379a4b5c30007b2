"""Plugin manager: validation at registration, entry-point discovery, selection, listing."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from dsh import (
    DshError,
    ModelRequest,
    PluginLoadError,
    PluginValidationError,
    create_plugin_manager,
    hookimpl,
    hookspec,
    list_plugins,
)
from dsh.plugins import PluginManager

Install = Callable[..., None]  # the `install` fixture of tests/core/conftest.py


PLUGIN_SOURCE = """
from dsh import hookimpl

@hookimpl
def agent_request(request):
    return request.model_copy(update={"system": request.system + "-%s"})
"""


def names(pm: PluginManager) -> list[str]:
    return [info.name for info in list_plugins(pm)]


def test_unknown_hook_fails_registration(dsh_pm: PluginManager) -> None:
    class Typo:
        @hookimpl
        def agent_reqest(self, request: Any) -> None: ...

    error = (
        "plugin 'typo': agent_reqest: unknown hook 'agent_reqest'; did you mean "
        "'agent_request'? If not: is dsh-core too old? For another plugin's hook, mark it "
        "optionalhook=True."
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        dsh_pm.register(Typo(), "typo")
    assert dsh_pm.get_plugin("typo") is None  # the manager is untouched

    class Unheard:
        @hookimpl
        def weather_report(self) -> None: ...

    with pytest.raises(PluginValidationError, match=r"unknown hook 'weather_report' — is dsh"):
        dsh_pm.register(Unheard(), "unheard")


def test_optionalhook_allows_another_plugins_hook(dsh_pm: PluginManager) -> None:
    class Plugin:
        @hookimpl(optionalhook=True)
        def permission_ask(self) -> None: ...

    assert dsh_pm.register(Plugin(), "p") == "p"


@pytest.mark.parametrize("opts", [{"wrapper": True}, {"hookwrapper": True}])
def test_wrapper_impls_are_rejected(dsh_pm: PluginManager, opts: dict[str, bool]) -> None:
    class Wrapper:
        @hookimpl(**opts)
        def agent_request(self) -> Any:
            yield

    with pytest.raises(PluginValidationError, match="wrapper impls are not supported"):
        dsh_pm.register(Wrapper(), "wrapper")
    assert dsh_pm.get_plugin("wrapper") is None


def test_async_register_impl_is_rejected(dsh_pm: PluginManager) -> None:
    class Plugin:
        @hookimpl
        async def register_tools(self, register: Any) -> None: ...

    with pytest.raises(PluginValidationError, match="must be a plain function"):
        dsh_pm.register(Plugin(), "p")


def test_bad_argument_name_is_rejected(dsh_pm: PluginManager) -> None:
    class Plugin:
        @hookimpl
        def agent_request(self, requets: Any) -> None: ...

    with pytest.raises(Exception, match="requets"):
        dsh_pm.register(Plugin(), "p")


def test_plugin_hookspecs_are_added_before_its_impls(dsh_pm: PluginManager) -> None:
    class Specs:
        @staticmethod
        @hookspec(firstresult=True)
        def custom_ask(question: str) -> str | None: ...

    class Plugin:
        dsh_hookspecs = Specs

        @hookimpl
        def custom_ask(self, question: str) -> str:
            return question.upper()

    dsh_pm.register(Plugin(), "p")
    assert dsh_pm.hook.custom_ask(question="ok?") == "OK?"


async def test_order_core_then_entry_points_by_name_then_explicit(install: Install) -> None:
    install("dsh-zeta", "zeta", "dsh_zeta_mod", PLUGIN_SOURCE % "zeta")
    install("dsh-alpha", "alpha", "dsh_alpha_mod", PLUGIN_SOURCE % "alpha")

    class Explicit:
        @hookimpl
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"system": request.system + "-explicit"})

    pm = create_plugin_manager([("explicit", Explicit())], env={"DSH_LOAD_PLUGINS": "alpha,zeta"})
    assert names(pm)[0] == "dsh.builtins"  # core defaults first
    assert names(pm)[-3:] == ["alpha", "zeta", "explicit"]
    request = await pm.relay.agent_request(agent=None, request=ModelRequest(), turn=1, step=1)  # type: ignore[arg-type]
    assert request.system == "-explicit-zeta-alpha"  # LIFO over registration order
    infos = {i.name: i for i in list_plugins(pm)}
    assert (infos["alpha"].distribution, infos["alpha"].version) == ("dsh-alpha", "1.0")
    assert infos["alpha"].hooks == ("agent_request",)


def test_load_plugins_env_selects_exactly(install: Install) -> None:
    install("dsh-a", "a", "dsh_a_mod", PLUGIN_SOURCE % "a")
    install("dsh-b", "b", "dsh_b_mod", PLUGIN_SOURCE % "b")
    assert "a" not in names(create_plugin_manager(env={"DSH_LOAD_PLUGINS": ""}))
    only_b = names(create_plugin_manager(env={"DSH_LOAD_PLUGINS": "b"}))
    assert "b" in only_b and "a" not in only_b
    forced = names(create_plugin_manager(select=["a"], env={"DSH_LOAD_PLUGINS": ""}))
    assert "a" in forced and "b" not in forced


def test_disable_autoload_loads_only_dash_p(install: Install) -> None:
    install("dsh-a", "a", "dsh_a_mod", PLUGIN_SOURCE % "a")
    install("dsh-b", "b", "dsh_b_mod", PLUGIN_SOURCE % "b")
    env = {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"}
    loaded = names(create_plugin_manager(env=env))
    assert "a" not in loaded and "b" not in loaded
    loaded = names(create_plugin_manager(select=["b"], env=env))
    assert "b" in loaded and "a" not in loaded


def test_dash_p_no_blocks_a_plugin(install: Install) -> None:
    install("dsh-a", "a", "dsh_a_mod", PLUGIN_SOURCE % "a")

    pm = create_plugin_manager(select=["no:a"], env={})
    assert "a" not in names(pm)
    assert pm.is_blocked("a")


def test_unknown_plugin_name_is_a_clear_error(install: Install) -> None:
    install("dsh-a", "a", "dsh_a_mod", PLUGIN_SOURCE % "a")
    install("dsh-stamp", "stamp", "dsh_stamp_mod", PLUGIN_SOURCE % "stamp")
    with pytest.raises(
        DshError, match=r"^-p nope: no plugin named nope is installed \(installed: .*a"
    ):
        create_plugin_manager(select=["nope"], env={})
    # where each name came from, and the name meant
    with pytest.raises(DshError) as info:
        create_plugin_manager(select=["zzz"], env={"DSH_LOAD_PLUGINS": "a,stmp"})
    message = str(info.value)
    assert message.startswith(
        "DSH_LOAD_PLUGINS: no plugin named stmp is installed; "
        "-p zzz: no plugin named zzz is installed (installed: "
    )
    assert message.endswith("; did you mean stamp?")
    with pytest.raises(DshError) as info:
        create_plugin_manager(select=["stmp"], env={})
    assert str(info.value).endswith("; did you mean -p stamp?")


def test_broken_entry_point_stops_start_up_with_escape_hatch(install: Install) -> None:
    install("dsh-broken", "broken", "dsh_broken_mod", "import does_not_exist_anywhere\n")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={})
    message = str(info.value)
    assert "dsh-broken" in message  # the distribution
    assert "broken = dsh_broken_mod" in message  # the entry point
    assert "does_not_exist_anywhere" in message  # the exception
    assert "-p no:broken" in message  # how to get going again
    pm = create_plugin_manager(select=["no:broken"], env={})
    assert "broken" not in names(pm)


def test_entry_point_with_invalid_impl_names_its_distribution(install: Install) -> None:
    source = "from dsh import hookimpl\n\n@hookimpl\ndef agent_requets(request):\n    pass\n"
    install("dsh-typo", "typo", "dsh_typo_mod", source)
    with pytest.raises(PluginLoadError, match=r"dsh-typo.*unknown hook 'agent_requets'"):
        create_plugin_manager(env={})


def test_an_entry_point_naming_a_class_says_to_name_a_module_or_an_instance(
    install: Install,
) -> None:
    source = "class Audit:\n    pass\n"
    install("dsh-audit", "audit", "dsh_audit_mod", source, attr="Audit")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={})
    assert (
        "it names the class Audit; point it at a module, or at an instance made in one "
        '(audit = "dsh_audit_mod:plugin" with plugin = Audit())'
    ) in str(info.value)


def test_an_entry_point_naming_a_hook_impl_says_to_name_its_module(install: Install) -> None:
    # registered, the function brought no hooks: the plugin silently did nothing
    install("dsh-fn", "fn", "dsh_fn_mod", attr="agent_request")  # NO_OP_SOURCE's impl
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={})
    assert (
        "it names the hook impl agent_request; point it at the module it is in "
        '(fn = "dsh_fn_mod"), or at an instance made in one'
    ) in str(info.value)


@hookimpl
def agent_request(request: object) -> None:
    return None


def test_a_hook_impl_passed_as_a_plugin_is_refused() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError) as info:
        pm.register(agent_request, "fn")
    assert str(info.value) == (
        "plugin 'fn': agent_request is a hook impl, not a plugin; register the module it "
        "is in (or an instance of its class)"
    )
    assert pm.get_plugin("fn") is None


def test_no_global_manager() -> None:
    first = create_plugin_manager(load_entry_points=False)
    second = create_plugin_manager(load_entry_points=False)
    assert first is not second and first.hook is not second.hook


def test_core_defaults_can_be_blocked_with_dash_p_no() -> None:
    pm = create_plugin_manager(select=["no:dsh.builtin_tools"], env={"DSH_LOAD_PLUGINS": ""})
    assert names(pm) == ["dsh.builtins"]
    assert pm.is_blocked("dsh.builtin_tools")


def test_an_explicit_plugin_under_a_blocked_name_is_an_error_not_a_silent_skip() -> None:
    class Guard:
        @hookimpl
        def tools_execute(self) -> None: ...

    with pytest.raises(DshError, match=r"'guard' is passed explicitly but its name is blocked"):
        create_plugin_manager([("guard", Guard())], select=["no:guard"], env={})


def test_importing_dsh_and_the_plugins_leaves_config_and_http_for_later() -> None:
    """What ``import dsh`` + the installed plugins costs at every start, ``dsh --help``
    included (bench/run.py's start-up row): no pydantic, no YAML reader, no config
    loader, no HTTP client; the plugins load their working parts on first use."""
    code = (
        "import importlib, importlib.util, sys, dsh\n"
        "for name in ('dsh_compaction', 'dsh_permissions', 'dsh_persistence'):\n"
        "    if importlib.util.find_spec(name):\n"
        "        importlib.import_module(name)\n"
        "heavy = ('pydantic', 'yaml', 'httpx', 'dsh.config', 'dsh.messages')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_blocking_a_plugin_that_is_not_installed_is_a_clear_error(install: Install) -> None:
    """`-p no:permisions` would otherwise leave `permissions` loaded without a word."""
    install("dsh-a", "alpha", "dsh_alpha_mod", PLUGIN_SOURCE % "alpha")
    with pytest.raises(DshError, match=r"-p no:alpah: no plugin named alpah is installed") as info:
        create_plugin_manager(select=["no:alpah"], env={})
    assert str(info.value).endswith("; did you mean -p no:alpha?")
    with pytest.raises(DshError) as info:  # every one named, as -p NAME's are
        create_plugin_manager(select=["no:alpah", "no:bteta"], env={})
    assert str(info.value).startswith(
        "-p no:alpah: no plugin named alpah is installed; "
        "-p no:bteta: no plugin named bteta is installed (installed: "
    )


def test_every_broken_entry_point_is_named_in_one_run(install: Install) -> None:
    install("dsh-broken", "broken", "dsh_broken_mod", "import does_not_exist_anywhere\n")
    install("dsh-good", "good", "dsh_good_mod", PLUGIN_SOURCE % "good")
    install("dsh-worse", "worse", "dsh_worse_mod", "raise RuntimeError('no luck')\n")
    env = {"DSH_LOAD_PLUGINS": "broken,good,worse"}
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env=env)
    error = info.value
    assert (error.name, [other.name for other in error.more]) == ("broken", ["worse"])
    lines = str(error).splitlines()
    assert lines[0].startswith("plugin 'broken' (distribution dsh-broken, entry point")
    assert lines[2].startswith("plugin 'worse' (distribution dsh-worse, entry point")
    assert "RuntimeError: no luck" in lines[2]
    assert lines[3] == (
        "  disable it with `-p no:worse`, or choose plugins with DSH_LOAD_PLUGINS=a,b, "
        "or uninstall dsh-worse"
    )
    assert len(lines) == 4


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        ([], "usage: dsh"),
        (["--help"], "usage: dsh"),
        (["-c", "x.yml", "-h"], "usage: dsh"),
        (["version"], "dsh-core "),
        (["run", "--help"], "usage: dsh run"),
    ],
)
def test_help_and_version_work_beside_a_broken_plugin(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    shown: str,
) -> None:
    from dsh.cli import main

    install("dsh-broken", "broken", "dsh_broken_mod", "import does_not_exist_anywhere\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "broken")
    try:
        status = main(argv)
    except SystemExit as exit:  # argparse's help
        status = exit.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert status == 0
    assert out.startswith(shown)
    assert err.startswith("dsh: warning: plugin 'broken' (distribution dsh-broken")
    assert err.endswith("dsh: (left out: broken)\n")  # the others load


@pytest.mark.parametrize("argv", [["models"], ["-c", "x.yml", "tools", "-v"], ["run", "-h2"]])
def test_other_commands_stop_at_a_broken_plugin_in_one_message(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    # `version -v` is the version command's flag, not dsh's -v (tracebacks): no traceback
    from dsh.cli import main

    install("dsh-broken", "broken", "dsh_broken_mod", "import does_not_exist_anywhere\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "broken")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: plugin 'broken' (distribution dsh-broken")
    assert "Traceback" not in err


def test_version_v_lists_every_installed_plugin_and_which_are_not_loaded(
    install: Install, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # for bug reports: a plugin that failed to load, or was left out, is listed too
    from dsh.cli import main

    install("dsh-broken", "broken", "dsh_broken_mod", "import does_not_exist_anywhere\n")
    install("dsh-good", "good", "dsh_good_mod", PLUGIN_SOURCE % "good", version="2.5")
    install("dsh-idle", "idle", "dsh_idle_mod", PLUGIN_SOURCE % "idle")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "broken,good")
    assert main(["version", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("dsh-core ")
    # the one that failed is marked with its error; the others are as they are
    assert (
        "dsh-broken 1.0 (plugin broken, failed to load: ModuleNotFoundError: No module "
        "named 'does_not_exist_anywhere')" in out
    )
    assert "dsh-good 2.5 (plugin good)" in out
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "good")
    assert main(["version", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "dsh-good 2.5 (plugin good)" in out
    assert "dsh-idle 1.0 (plugin idle, not loaded)" in out
    assert "dsh-broken 1.0 (plugin broken, not loaded)" in out
