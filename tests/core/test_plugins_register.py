"""Registering a plugin object: the mistakes a plugin author makes first are refused at
registration, naming the plugin, the impl and what to do instead."""

from __future__ import annotations

import re
import types
from typing import Any

import pytest

from dsh import PluginValidationError, hookimpl
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import ScriptedModel, run_turn, scripted_harness


class Tagger:
    @hookimpl
    def agent_request(self, request: Any) -> Any:
        return request


class Misnamed:
    @hookimpl
    def agent_request(self, req: Any, turn: Any, limit: int = 3) -> Any:
        return req


def test_an_argument_the_hook_does_not_have_is_named_with_the_ones_it_has() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        "plugin 'tagger': agent_request(req, turn): the hook has no argument 'req'; "
        "an impl takes any of agent, request, turn, step (by name)"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(Misnamed(), "tagger")
    assert pm.get_plugin("tagger") is None


class NoSelf:
    @hookimpl
    def agent_request(request: Any, step: Any) -> Any:  # no self: the mistake tested
        return request


def test_a_method_without_self_is_refused_saying_to_add_it() -> None:
    # Python binds the plugin object to a method's first parameter: `request` would be
    # the plugin, the impl would take `step` alone, and the turn would fail with
    # "'NoSelf' object has no attribute 'model_copy'"
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        "plugin 'noself': agent_request(request, step): a method's first parameter is "
        "given the plugin object, so 'request' would never be the hook's argument; add "
        "self first: def agent_request(self, request, step)"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(NoSelf(), "noself")
    assert pm.get_plugin("noself") is None


def test_a_method_whose_first_parameter_is_not_a_hook_argument_registers() -> None:
    class Named:
        @hookimpl
        def agent_request(plugin, request: Any) -> Any:  # self by another name
            return request

    pm = create_plugin_manager(load_entry_points=False)
    pm.register(Named(), "named")
    assert pm.get_plugin("named") is not None


class Kwargs:
    @hookimpl
    def session_event(self, **kwargs: Any) -> None:
        pass


class Star:
    @hookimpl
    def agent_request(self, request: Any, *args: Any) -> Any:
        return request


@pytest.mark.parametrize(
    ("plugin", "error"),
    [
        (
            Kwargs(),
            "plugin 'logger': session_event(**kwargs): dsh passes hook arguments by name "
            "(none to *args or **kwargs); name the ones you use: session, event",
        ),
        (
            Star(),
            "plugin 'logger': agent_request(request, *args): dsh passes hook arguments by name "
            "(none to *args or **kwargs); name the ones you use: agent, request, turn, step",
        ),
    ],
)
def test_an_impl_taking_args_or_kwargs_is_refused(plugin: object, error: str) -> None:
    # pluggy would call it with nothing in them: a generic logger saw empty kwargs
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(plugin, "logger")
    assert pm.get_plugin("logger") is None


class KeywordOnly:
    @hookimpl
    def agent_request(self, *, request: Any) -> Any:
        return request


class KeywordOnlyTypo:
    @hookimpl
    def agent_request(self, turn: int, *, requst: Any) -> Any:
        return None


class KeywordOnlyOptional:
    @hookimpl(optionalhook=True)
    def other_plugins_hook(self, *, call: Any) -> None:
        return None


@pytest.mark.parametrize(
    ("plugin", "error"),
    [
        (
            KeywordOnlyOptional(),
            "plugin 'kw': other_plugins_hook(*, call): dsh passes hook arguments "
            "positionally (chosen by the parameters' names), none to a keyword-only "
            "parameter; drop the '*'",
        ),
        (
            KeywordOnly(),
            "plugin 'kw': agent_request(*, request): dsh passes hook arguments "
            "positionally (chosen by the parameters' names), none to a keyword-only "
            "parameter; drop the '*'",
        ),
        (
            KeywordOnlyTypo(),
            "plugin 'kw': agent_request(turn, *, requst): dsh passes hook arguments "
            "positionally (chosen by the parameters' names), none to a keyword-only "
            "parameter; drop the '*'",
        ),
    ],
)
def test_a_keyword_only_argument_is_refused(plugin: object, error: str) -> None:
    # accepted, the impl failed at every call: pluggy calls impls positionally
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(plugin, "kw")
    assert pm.get_plugin("kw") is None


async def test_a_keyword_only_argument_with_a_default_is_the_impls_own() -> None:
    seen: list[int] = []

    class Limited:
        @hookimpl
        def agent_request(self, request: Any, *, limit: int = 3) -> Any:
            seen.append(limit)
            return request

    model = ScriptedModel(["ok"])
    async with scripted_harness(model, plugins=[Limited()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
    assert seen == [3]


def test_an_argument_with_a_default_is_not_asked_of_the_hook() -> None:
    # pluggy passes only arguments without defaults; one with a default is the impl's own
    class Defaulted:
        @hookimpl
        def agent_request(self, request: Any, limit: int = 3) -> Any:
            return request

    pm = create_plugin_manager(load_entry_points=False)
    assert pm.register(Defaulted(), "d") == "d"


class TurnDefaulted:
    @hookimpl
    def agent_request(self, request: Any, turn: int | None = None) -> Any:
        return request


class TurnKeywordDefaulted:
    @hookimpl
    def agent_request(self, request: Any, *, turn: int = 0) -> Any:
        return request


@pytest.mark.parametrize(
    ("plugin", "written"),
    [(TurnDefaulted(), "request, turn"), (TurnKeywordDefaulted(), "request, *, turn")],
    ids=["positional", "keyword-only"],
)
def test_a_default_on_an_argument_of_the_hook_is_refused(plugin: object, written: str) -> None:
    """Was: registered fine, and ``turn`` was the default at every call (a parameter
    with a default is never passed), with nothing said."""
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        f"plugin 'late': agent_request({written}): 'turn' is an argument of the hook, but a "
        "parameter with a default is the impl's own and is never passed; drop the default "
        "to be given it"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(plugin, "late")
    assert pm.get_plugin("late") is None


def test_a_module_plugin_is_checked_the_same_way() -> None:
    module = types.ModuleType("dsh_wrongarg")

    @hookimpl
    def tools_execute(tool_call: Any) -> None:
        return None

    module.tools_execute = tools_execute  # type: ignore[attr-defined]
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError, match=r"^plugin 'dsh_wrongarg': tools_execute"):
        pm.register(module)


async def test_a_class_is_refused_for_its_instance() -> None:
    # registered as is, its impls would fail at every call, blaming a missing argument
    model = ScriptedModel(["ok"])
    with pytest.raises(
        PluginValidationError,
        match=r"^plugin 'Tagger': Tagger is a class; register an instance of it$",
    ):
        async with scripted_harness(model, plugins=[Tagger], load_entry_points=False):
            pass


def test_an_unnamed_plugin_is_named_after_its_class_not_its_id() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    first, second = Tagger(), Tagger()
    assert pm.register(first) == f"{__name__}.Tagger"
    assert pm.register(second) == f"{__name__}.Tagger-2"
    assert pm.get_name(second) == f"{__name__}.Tagger-2"
    with pytest.raises(PluginValidationError, match=rf"^plugin '{__name__}\.Misnamed': "):
        pm.register(Misnamed())


def test_a_plugin_manager_of_tests_names_unnamed_plugins_too(dsh_pm: PluginManager) -> None:
    assert dsh_pm.register(Tagger()) == f"{__name__}.Tagger"


def test_a_function_named_like_a_hook_without_hookimpl_is_refused() -> None:
    # pluggy passes over an unmarked function: the plugin would silently do nothing
    module = types.ModuleType("dsh_forgot")

    def session_event(session: Any, event: Any) -> None:
        return None

    session_event.__module__ = module.__name__  # defined there, as in a real plugin module
    module.session_event = session_event  # type: ignore[attr-defined]
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        "plugin 'dsh_forgot': session_event: named like the hook 'session_event' but not "
        "marked @hookimpl, so dsh would never call it; add @hookimpl (from dsh import hookimpl)"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(module)
    assert pm.get_plugin("dsh_forgot") is None


def test_other_unmarked_names_and_hook_named_values_are_left_alone() -> None:
    class Helper:
        agent_request = "a value, not a function"

        def tagger(self) -> None:  # not a hook's name
            return None

    pm = create_plugin_manager(load_entry_points=False)
    assert pm.register(Helper(), "helper") == "helper"


def test_a_name_already_taken_says_by_what_and_how_out() -> None:
    pm = create_plugin_manager([("tagger", Tagger())], load_entry_points=False)
    pm.distributions["tagger"] = ("dsh-tagger", "1.0")  # as loading its entry point does
    error = (
        "plugin 'tagger': the name is taken by the entry point of dsh-tagger; register this "
        "one under another name, or leave out the installed plugins (load_entry_points=False)"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(Tagger(), "tagger")
    del pm.distributions["tagger"]
    error = "plugin 'tagger': two plugins passed under the name 'tagger'; give one another name"
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(Tagger(), "tagger")


def test_one_object_registered_twice_without_entry_points_says_so() -> None:
    # no entry point took it: the advice to leave the installed plugins out would not help
    tagger = Tagger()
    pm = create_plugin_manager([("tagger", tagger)], load_entry_points=False)
    for name in ("tagger", "again"):
        error = f"plugin {name!r}: this object is registered already, as 'tagger'; register it once"
        with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
            pm.register(tagger, name)


def test_an_equal_object_registered_again_is_told_why_it_counts_as_the_same() -> None:
    # two dataclass instances with the same fields are == (pluggy compares plugins so),
    # though neither is registered twice: "this object is registered already" was wrong
    import dataclasses

    @dataclasses.dataclass
    class Counter:
        seen: int = 0

        @hookimpl
        def agent_request(self, request: Any) -> None:
            self.seen += 1

    pm = create_plugin_manager([("one", Counter())], load_entry_points=False)
    error = (
        "plugin 'two': an equal object (==) is registered already, as 'one', and pluggy "
        "tells plugins apart by ==; make the class compare by identity "
        "(@dataclass(eq=False)), or register one"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(Counter(), "two")


def test_a_core_default_name_is_not_blamed_on_installed_plugins() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    error = (
        "plugin 'dsh.builtins': the name is dsh-core's own plugin's; register this one "
        "under another name"
    )
    with pytest.raises(PluginValidationError, match=f"^{re.escape(error)}$"):
        pm.register(Tagger(), "dsh.builtins")


def test_a_function_imported_under_a_hooks_name_is_not_the_plugins_own() -> None:
    from os.path import join

    module = types.ModuleType("dsh_aliased")
    module.agent_status = join  # type: ignore[attr-defined]  # a helper, not an impl
    pm = create_plugin_manager(load_entry_points=False)
    assert pm.register(module) == "dsh_aliased"


def test_a_method_named_like_a_hook_without_hookimpl_is_refused() -> None:
    class Forgot:
        def agent_request(self, request: Any) -> None:
            return None

    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError, match="not marked @hookimpl"):
        pm.register(Forgot(), "forgot")


def test_registering_runs_no_property_of_the_plugin() -> None:
    """pluggy reads a plugin's attributes statically (a property is not run); dsh's own
    look for unmarked hook-named functions ran every property and ``__getattr__``-made
    attribute of the object as it registered (a lazy client connecting, one raising)."""
    ran: list[str] = []

    class Lazy:
        @property
        def client(self) -> object:
            ran.append("client")
            raise RuntimeError("connects to a server")

        @property
        def agent_status(self) -> object:  # named like a hook, computed: not run either
            ran.append("agent_status")
            return None

        @hookimpl
        def agent_request(self, request: Any) -> Any:
            return request

    pm = create_plugin_manager(load_entry_points=False)
    assert pm.register(Lazy(), "lazy") == "lazy"
    assert ran == []
