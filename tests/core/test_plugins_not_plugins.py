"""Objects that cannot be plugins: a str (a plugin's name, as pytest's ``-p`` takes it),
None, a number, a plain function. pluggy registers each, and each would silently do
nothing (a test of the plugin would pass without it): dsh refuses them, naming what was
passed and what to pass instead; an entry point naming one fails to load."""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh import PluginLoadError, PluginValidationError, create_plugin_manager, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness

Install = Callable[..., None]  # the `install` fixture of tests/core/conftest.py


def plain(request: Any) -> Any:  # no @hookimpl: a function, not a plugin
    return request


@pytest.mark.parametrize(
    ("plugin", "error"),
    [
        (
            "dsh_stamp",
            "plugin 'dsh_stamp': the str 'dsh_stamp' is not a plugin; pass the module, not "
            "its name: import it",
        ),
        (
            None,
            "plugin 'None': None is not a plugin; pass a module, or an instance of a class, "
            "holding @hookimpl functions",
        ),
        (
            42,
            "plugin '42': the int 42 is not a plugin; pass a module, or an instance of a "
            "class, holding @hookimpl functions",
        ),
        (
            True,
            "plugin 'True': the bool True is not a plugin; pass a module, or an instance of "
            "a class, holding @hookimpl functions",
        ),
        (
            plain,
            "plugin 'plain': the function plain is not a plugin; register the module it is "
            "in (or an instance of its class), with its hooks marked @hookimpl",
        ),
    ],
)
def test_an_object_that_can_hold_no_hooks_is_refused(plugin: object, error: str) -> None:
    pm = create_plugin_manager(load_entry_points=False)
    before = pm.list_name_plugin()
    with pytest.raises(PluginValidationError) as info:
        pm.register(plugin)
    assert str(info.value) == error
    assert pm.list_name_plugin() == before


def test_a_name_given_is_the_one_the_error_names() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError) as info:
        pm.register("dsh_stamp", "stamp")
    assert str(info.value).startswith("plugin 'stamp': the str 'dsh_stamp' is not a plugin")
    assert info.value.plugin == "stamp"


async def test_a_str_among_a_harness_plugins_is_refused() -> None:
    with pytest.raises(PluginValidationError, match=r"pass the module, not its name"):
        async with scripted_harness(
            ScriptedModel(["ok"]), plugins=["dsh_stamp"], load_entry_points=False
        ):
            pass


async def test_modules_and_instances_still_register() -> None:
    seen: list[str] = []

    class Stamp:
        @hookimpl
        def agent_request(self, request: Any) -> None:
            seen.append("instance")

    @hookimpl
    def agent_request(request: Any) -> None:
        seen.append("module")

    module = types.ModuleType("dsh_stamp_mod")
    module.agent_request = agent_request  # type: ignore[attr-defined]
    empty = types.ModuleType("dsh_empty_mod")  # no hooks yet: allowed, as in pluggy
    plugins = [("mod", module), Stamp(), empty]
    async with scripted_harness(
        ScriptedModel(["ok"]), plugins=plugins, load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
    assert sorted(seen) == ["instance", "module"]


@pytest.mark.parametrize(
    ("source", "attr", "said"),
    [
        ("NOTHING = 'dsh_bad'\n", "NOTHING", "it names the str 'dsh_bad'"),
        ("NOTHING = None\n", "NOTHING", "it names None"),
        ("def func():\n    pass\n", "func", "it names the function func"),
    ],
)
def test_an_entry_point_naming_one_fails_to_load(
    install: Install, source: str, attr: str, said: str
) -> None:
    install("dsh-bad", "bad", "dsh_bad_mod", source, attr=attr)
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={})
    first, way_out = str(info.value).splitlines()
    assert first.startswith(
        f"plugin 'bad' (distribution dsh-bad, entry point bad = dsh_bad_mod:{attr}) failed "
        f"to load: TypeError: {said}, which is not a plugin; point it at a module "
        '(bad = "dsh_bad_mod"), or at an instance made in one'
    )
    assert "`-p no:bad`" in way_out


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("dsh-bad-mod", "dsh_bad_mod"),  # the distribution's name, not the module's
        ("src/dsh_bad_mod.py:plugin", "src.dsh_bad_mod:plugin"),
        ("dsh_bad_mod:", "dsh_bad_mod"),
        ("dsh bad mod", ""),  # nothing to suggest
    ],
)
def test_an_entry_point_that_names_no_module_says_what_to_write(
    install: Install, tmp_path: Path, value: str, meant: str
) -> None:
    # importlib.metadata's own error for it: AttributeError: 'NoneType' object has no
    # attribute 'group'
    install("dsh-bad", "bad", "dsh_bad_mod")
    (tmp_path / "dsh_bad-1.0.dist-info" / "entry_points.txt").write_text(f"[dsh]\nbad = {value}\n")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={})
    first, way_out = str(info.value).splitlines()
    assert first == (
        f"plugin 'bad' (distribution dsh-bad, entry point bad = {value}) failed to load: "
        f'ValueError: {value!r} is not a module to import: write bad = "package.module" '
        "(the import name, not the distribution's or a file's), or \"package.module:name\" "
        "for an object in one" + (f"; did you mean bad = {meant!r}?" if meant else "")
    )
    assert "`-p no:bad`" in way_out


async def test_a_class_made_without_a_module_still_registers() -> None:
    """A plugin class built by ``type()`` in ``exec`` has no ``__module__``: the check
    of what cannot be a plugin failed with ``AttributeError: __module__``."""
    seen: list[str] = []

    def agent_request(self: Any, request: Any) -> None:
        seen.append("ran")

    namespace: dict[str, Any] = {"hookimpl": hookimpl, "fn": agent_request}
    exec("P = type('P', (), {'agent_request': hookimpl(fn)})", namespace)
    plugin = namespace["P"]()
    assert not hasattr(type(plugin), "__module__")
    async with scripted_harness(ScriptedModel(["hi"]), plugins=[("dyn", plugin)]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
    assert seen == ["ran"]


async def _tagged(request: Any, tag: str) -> Any:
    return request


class AsyncCallable:
    async def __call__(self, request: Any) -> Any:
        return request


def _holding(name: str, value: object) -> object:
    holder = types.SimpleNamespace()
    setattr(holder, name, value)
    return holder


@pytest.mark.parametrize(
    ("plugin", "what"),
    [
        (
            _holding("agent_request", hookimpl(functools.partial(_tagged, tag="P"))),
            "functools.partial",
        ),
        (_holding("agent_request", hookimpl(AsyncCallable())), f"{__name__}.AsyncCallable"),
        (
            _holding(
                "tag", hookimpl(specname="agent_request")(functools.partial(_tagged, tag="P"))
            ),
            "functools.partial",
        ),
    ],
    ids=["partial", "async-call", "specname"],
)
def test_a_marked_impl_that_is_not_a_function_is_refused(plugin: object, what: str) -> None:
    """Was: pluggy takes only functions and methods as impls and passed over it: the
    plugin registered, listing no hooks, and did nothing."""
    name = "agent_request" if hasattr(plugin, "agent_request") else "tag"
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        f"plugin 'p': {name}: marked @hookimpl but a {what}, not a function, so dsh (like "
        "pluggy) would never call it; wrap it in a def that calls it (an async def to await "
        "what it returns) and mark that def"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(plugin, "p")
    assert pm.get_plugin("p") is None


class AutoDict(dict[str, Any]):
    """A mapping that makes any attribute read (addict's Dict, python-box's Box)."""

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        return self.setdefault(key, AutoDict())


def test_a_plugin_holding_a_mapping_that_answers_any_attribute_registers() -> None:
    """Was: the check for a marked non-function read the mark with ``getattr``, which
    such a mapping answers with a dict: the plugin was refused as holding a marked impl,
    and the probe added a ``dsh_impl`` key to the plugin's own mapping."""

    class Configured:
        def __init__(self) -> None:
            self.config = AutoDict(depth=3)

        @hookimpl
        def register_tools(self, register: Any) -> None:
            pass

    plugin = Configured()
    pm = create_plugin_manager(load_entry_points=False)

    pm.register(plugin, "p")

    assert pm.get_plugin("p") is plugin
    assert plugin.config == {"depth": 3}


class Refusing:
    """An object whose ``__getattr__`` raises for any attribute it lacks."""

    def __getattr__(self, key: str) -> Any:
        raise RuntimeError(f"no {key} here")


def _function_holding(value: object, name: str = "value") -> Callable[[], None]:
    def held() -> None:
        pass

    setattr(held, name, value)
    return held


@pytest.mark.parametrize("value", [AutoDict(depth=3), Refusing()], ids=["answers", "raises"])
def test_a_function_holding_an_object_that_runs_getattr_is_no_plugin(value: object) -> None:
    """Was: whether a function holds marked functions was asked with ``hasattr``, which
    runs the held object's ``__getattr__``: a mapping answering any attribute made the
    function a plugin (registered, doing nothing) and got a ``dsh_impl`` key, and one
    raising made ``register`` raise that error."""
    function = _function_holding(value)
    pm = create_plugin_manager(load_entry_points=False)
    said = "the function _function_holding.<locals>.held is not a plugin;"
    with pytest.raises(PluginValidationError, match=re.escape(said)):
        pm.register(function, "p")
    assert pm.get_plugin("p") is None
    assert value == {"depth": 3} or isinstance(value, Refusing)


@hookimpl
def _held_impl(register: Any) -> None:
    pass


class _Holder:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        pass


@pytest.mark.parametrize(
    "impl", [_held_impl, _Holder().register_tools], ids=["function", "bound-method"]
)
def test_a_function_holding_a_marked_function_is_a_plugin(impl: object) -> None:
    """As pluggy takes it: the marked function held is the plugin's impl."""
    function = _function_holding(impl, "register_tools")
    pm = create_plugin_manager(load_entry_points=False)
    pm.register(function, "p")
    assert pm.get_plugin("p") is function


class Answering:
    """A plugin whose ``__getattr__`` answers any attribute (a proxy, a config object)."""

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        return {}

    @hookimpl
    def register_tools(self, register: Any) -> None:
        pass


class Descriptor(Answering):
    """``Answering`` whose class has ``__get__``, so that ``inspect.isroutine`` holds."""

    def __get__(self, owner: object, kind: type | None = None) -> Descriptor:
        return self


@pytest.mark.parametrize("plugin", [Answering(), Descriptor()], ids=["object", "routine"])
def test_a_plugin_answering_any_attribute_registers(plugin: object) -> None:
    """Was: its ``dsh_hookspecs`` was read with ``getattr`` (the ``{}`` it answered was
    taken for hookspecs: a ``ValueError``), and whether it is a marked function with
    ``hasattr`` (answered: it was refused as a hook impl). Both are read as pluggy reads
    a plugin, without running its code."""
    pm = create_plugin_manager(load_entry_points=False)
    pm.register(plugin, "p")
    assert [impl.plugin for impl in pm.hook.register_tools.get_hookimpls()][-1] is plugin


def _takes_agent(agent: Any) -> None:
    pass


def test_a_marked_callable_that_is_not_a_function_is_no_plugin() -> None:
    """Was: ``hookimpl(functools.partial(f))`` registered as a plugin, holding no hooks,
    doing nothing."""
    pm = create_plugin_manager(load_entry_points=False)
    marked = hookimpl(functools.partial(_takes_agent))
    with pytest.raises(PluginValidationError, match=r"marked @hookimpl.*functools\.partial"):
        pm.register(marked, "p")
    assert pm.get_plugin("p") is None
