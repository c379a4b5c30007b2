"""The plugin manager: creation, validation, listing (which entry points are installed:
``dsh._entry_points``; which of them load, and loading them: ``dsh._plugin_loading``).

Order of registration, and so of calls (pluggy calls the last registered first among
impls of equal tryfirst/trylast standing):

1. core defaults (their impls are ``trylast`` and always run after every other impl,
   including other plugins' ``trylast`` ones),
2. entry points of group ``dsh``, sorted by name,
3. plugins passed explicitly, in the order given.

There is no global manager: every harness, CLI run and test makes its own.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pluggy

from dsh import hookspecs
from dsh._call_arguments import specified_hooks
from dsh._calling import Dispatcher, Reporter, default_reporter, is_async_function
from dsh._entry_points import ENTRY_POINT_GROUP, PluginNameClash, clashes, installed_plugins
from dsh._impl_arguments import arguments_problem
from dsh._late_plugins import LatePluginWarning
from dsh._plugin_loading import TRUE_VALUES as TRUE_VALUES
from dsh._plugin_loading import last_wins, load_installed
from dsh._plugin_objects import declared_specs, is_hook_impl, not_a_plugin, unmarked
from dsh._plugin_specs import has_spec_already, spec_clash
from dsh._relay import HookRelay
from dsh.errors import DshError, HookError, PluginValidationError

__all__ = [
    "ENTRY_POINT_GROUP",
    "LatePluginWarning",
    "PluginInfo",
    "PluginManager",
    "PluginNameClash",
    "clashes",
    "create_plugin_manager",
    "installed_plugins",
    "list_plugins",
]

#: Modules registered first by every manager: the core's own behaviour, written as
#: plugins on the public hooks.
CORE_DEFAULTS: tuple[str, ...] = ("dsh.builtins", "dsh.builtin_tools")


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A registered plugin as ``dsh plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with dsh's rules: every impl must match a known hook, wrappers
    are refused, and the dispatcher's cached plans follow every (un)registration."""

    def __init__(self, report: Reporter = default_reporter) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.dispatcher = Dispatcher(self, report, last=CORE_DEFAULTS)
        #: Typed calls of every core hook: ``await pm.relay.agent_request(...)``.
        self.relay = HookRelay(self.dispatcher)
        #: Called with each interception hook failure that ended a turn (its ``turn/end``
        #: error, code HOOK): dsh.testing's ErrorRecorder records them.
        self.turn_failures: list[Callable[[HookError], None]] = []
        #: plugin name -> (distribution, version), for plugins that came from one.
        self.distributions: dict[str, tuple[str, str]] = {}
        #: installed entry-point name -> the module it names (read when first needed)
        self.installed: dict[str, str] | None = None
        self._registering: str | None = None
        #: Plugins unregistered because their impls of another plugin's hook do not fit
        #: the spec it brought (``_leave_out_mismatched``): each loader reports them.
        self._evicted: list[PluginValidationError] = []
        self._leaving_out = False
        #: hook -> the plugin whose dsh_hookspecs brought its spec (for errors)
        self._spec_owners: dict[str, str] = {}

    @contextmanager
    def _leaving_out_misfits(self) -> Iterator[None]:
        """Within (the loaders): a plugin bringing a spec that an earlier plugin's
        optionalhook impl misfits is registered, and the earlier one unregistered and kept
        in ``_evicted``, for the loader to report. Outside, ``register`` refuses the new
        plugin instead, changing nothing (a plugin silently gone could be a policy)."""
        before, self._leaving_out = self._leaving_out, True
        try:
            yield
        finally:
            self._leaving_out = before

    def _take_evicted(self) -> list[PluginValidationError]:
        """The plugins evicted since last asked, each with its error (and forget them)."""
        evicted, self._evicted = self._evicted, []
        return evicted

    def is_left_out(self, name: str) -> bool:
        """Whether ``name`` is an installed plugin that does not run (see
        ``dsh._left_out``): settings for it would apply to nothing."""
        from dsh._left_out import left_out

        return left_out(self, name)

    def is_missing(self, name: str) -> bool:
        """Whether ``name`` is a plugin that is not installed (``dsh._left_out``):
        settings for one of dsh's own would apply to nothing."""
        from dsh._left_out import missing

        return missing(self, name)

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin``; a plugin module may bring its own hookspecs in a
        ``dsh_hookspecs`` attribute (a module or class), added before its impls."""
        refused = not_a_plugin(plugin, name)
        if refused is not None:  # pluggy takes it, and it would do nothing
            raise refused
        name = name or self.get_canonical_name(plugin)
        if isinstance(plugin, type):  # its impls would be called without an instance
            raise PluginValidationError(
                name, f"{plugin.__qualname__} is a class; register an instance of it"
            )
        if is_hook_impl(plugin):  # registered, it brings no hooks: it would do nothing
            what = getattr(plugin, "__qualname__", name)
            raise PluginValidationError(
                name,
                f"{what} is a hook impl, not a plugin; register the module it is in (or an "
                "instance of its class)",
            )
        # pluggy says only "already registered"; say by what, and what to do
        taken = self.get_name(plugin) if self.is_registered(plugin) else None
        if taken is not None and self.get_plugin(taken) is not plugin:
            raise PluginValidationError(  # pluggy's "already registered" is by ==
                name,
                f"an equal object (==) is registered already, as {taken!r}, and pluggy tells "
                "plugins apart by ==; make the class compare by identity "
                "(@dataclass(eq=False)), or register one",
            )
        if taken is not None or self.get_plugin(name) is not None:
            raise PluginValidationError(name, self._taken(name, taken))
        specs = declared_specs(plugin)  # not what a proxy's __getattr__ answers
        if specs is not None:
            clash = spec_clash(self, specs, self._spec_owners)
            if clash is not None:
                raise PluginValidationError(name, clash)
            self._leave_out_mismatched(specs, name)
            self.add_hookspecs(specs)
            for hook in dir(specs):
                if has_spec_already(self.hook, specs, hook):
                    self._spec_owners.setdefault(hook, name)
        self._registering = name
        try:
            registered = super().register(plugin, name)
        finally:
            self._registering = None
        try:
            self.dispatcher.invalidate()
        except BaseException:
            # a listener raised (dsh.plugins.LatePluginWarning under -W error): the
            # caller is told the registration failed, so it must not stand, hooks running
            if registered is not None:
                self.unregister(name=registered)
            raise
        return registered

    def _taken(self, name: str, taken: str | None) -> str:
        """Why ``name`` cannot be registered: this object is registered already (as
        ``taken``), or another plugin has the name; only when an entry point took it is
        leaving out the installed plugins the way out."""
        where = self.distributions.get(taken or name)
        if where is None or (taken or name) in CORE_DEFAULTS:
            if taken is not None:
                return f"this object is registered already, as {taken!r}; register it once"
            if name in CORE_DEFAULTS:
                return "the name is dsh-core's own plugin's; register this one under another name"
            return f"two plugins passed under the name {name!r}; give one another name"
        source, out = f"the entry point of {where[0]}", "leave out the installed plugins"
        if taken is not None:  # this very object: an installed plugin passed again
            why = f"it is loaded already, as {taken!r}, by {source}; pass it only when you"
        else:
            why = f"the name is taken by {source}; register this one under another name, or"
        return f"{why} {out} (load_entry_points=False)"

    def get_canonical_name(self, plugin: object) -> str:
        """A module's name; for another object, its class's (``mod.Tagger``, then
        ``mod.Tagger-2`` for a second instance), not pluggy's ``id()``."""
        name = getattr(plugin, "__name__", None)
        if isinstance(name, str):
            return name
        kind = type(plugin)
        base = f"{kind.__module__}.{kind.__qualname__}"
        taken = {taken for taken, _ in self.list_name_plugin()}
        name, count = base, 1
        while name in taken:
            count += 1
            name = f"{base}-{count}"
        return name

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        removed = super().unregister(plugin, name)
        self.dispatcher.invalidate()
        return removed

    def _leave_out_mismatched(self, specs: Any, name: str) -> None:
        """Before ``specs`` (of plugin ``name``) are added: a plugin registered earlier
        whose optionalhook impl of one of them takes an argument the spec has not is the
        one at fault, not ``name`` (pluggy would fail it with a raw multi-line error).
        Within ``_leaving_out_misfits``, unregister it and keep its error in ``_evicted``;
        outside, refuse ``name`` with that plugin's error, before anything changes."""
        misfits: dict[str, str] = {}  # earlier plugin -> its first misfit impl's problem
        for hook in dir(specs):
            opts = self.parse_hookspec_opts(specs, hook)
            caller = getattr(self.hook, hook, None)
            if opts is None or not isinstance(caller, pluggy.HookCaller) or caller.has_spec():
                continue
            spec = pluggy.HookCaller(hook, _no_calls, specs, opts).spec
            assert spec is not None
            allowed = (*spec.argnames, *spec.kwargnames)
            for impl in caller.get_hookimpls():
                problem = arguments_problem(impl.function.__name__, impl.function, allowed)
                if problem is not None and self.get_plugin(impl.plugin_name) is not None:
                    misfits.setdefault(impl.plugin_name, problem)
        for plugin, problem in misfits.items():
            if not self._leaving_out:
                raise PluginValidationError(
                    plugin,
                    f"{problem}; so {name!r}, which specifies that hook, is not registered: "
                    f"fix {plugin!r}, or unregister it first",
                )
            self.unregister(name=plugin)
            self.distributions.pop(plugin, None)
            self._evicted.append(PluginValidationError(plugin, problem))

    def add_hookspecs(self, module_or_class: Any) -> None:
        """pluggy's, but specs added already, the very functions (plugins sharing one
        ``dsh_hookspecs``, or one registered again), are passed over, not a ValueError."""
        ns, marked = module_or_class, []
        for name in dir(ns):
            if self.parse_hookspec_opts(ns, name) is not None:
                marked.append(name)
        if marked and all(has_spec_already(self.hook, ns, name) for name in marked):
            return
        self._only_new = True
        try:
            super().add_hookspecs(ns)
        finally:
            self._only_new = False
        if hasattr(self, "dispatcher"):
            self.dispatcher.invalidate()

    _only_new = False  # within add_hookspecs: parse_hookspec_opts passes over added ones

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        if self._only_new and has_spec_already(self.hook, module_or_class, name):
            return None
        return super().parse_hookspec_opts(module_or_class, name)

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            problem = unmarked(self.hook, plugin, name)
            if problem is not None:
                raise PluginValidationError(self._registering or repr(plugin), problem)
            return None
        hook = opts.get("specname") or name
        who = self._registering or repr(plugin)
        if opts.get("wrapper") or opts.get("hookwrapper"):
            raise PluginValidationError(
                who,
                f"{name}: wrapper impls are not supported on dsh hooks ({hook}); dsh awaits "
                "impls and a wrapper cannot. Write a plain impl with tryfirst/trylast instead.",
            )
        caller = getattr(self.hook, hook, None)
        if not opts.get("optionalhook") and (caller is None or not caller.has_spec()):
            from dsh._quoted import did_you_mean

            typo = did_you_mean(hook, specified_hooks(self.hook))
            why = "is dsh-core too old? For another plugin's hook, mark it optionalhook=True."
            raise PluginValidationError(
                who,
                f"{name}: unknown hook {hook!r}{typo} If not: {why}"
                if typo
                else f"{name}: unknown hook {hook!r} — {why}",
            )
        spec = caller.spec if caller is not None else None
        allowed = None if spec is None else (*spec.argnames, *spec.kwargnames)
        problem = arguments_problem(name, getattr(plugin, name), allowed)
        if problem is not None:
            raise PluginValidationError(who, problem)
        if hookspecs.CALL_STYLES.get(hook) == "register" and is_async_function(
            getattr(plugin, name)
        ):
            raise PluginValidationError(
                who, f"{name}: {hook} runs at start-up and must be a plain function"
            )
        return opts


def _no_calls(*args: Any) -> Any:  # the hook caller built only to read a spec
    raise AssertionError("never called")


def create_plugin_manager(
    plugins: Iterable[object | tuple[str, object]] = (),
    *,
    load_entry_points: bool = True,
    select: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    report: Reporter = default_reporter,
) -> PluginManager:
    """A new manager with core defaults, the selected entry points, then ``plugins``.

    ``plugins`` items are plugin objects or ``(name, plugin)`` pairs. ``select`` holds
    ``-p`` values; ``env`` defaults to ``os.environ``. A bare str for either is a
    ``TypeError`` (its letters would be taken for plugins, or for ``-p`` values).
    """
    if isinstance(plugins, str):
        raise TypeError(
            "plugins= takes a list of plugins (objects, or (name, plugin) pairs), not a "
            "str: plugins=[plugin]"
        )
    if isinstance(select, str):
        raise TypeError(f"select= takes a list of -p values, not a str: select=[{select!r}]")
    pm = PluginManager(report)
    select = last_wins(select)  # -p no:NAME -p NAME loads NAME, as in pytest
    plugins = list(plugins)
    for module in CORE_DEFAULTS:
        if f"no:{module}" in select:  # the core's own plugins can be blocked too (-p
            # NAME of one is no mistake: they always load)
            pm.set_blocked(module)
            continue
        pm.register(importlib.import_module(module), module)
        pm.distributions[module] = ("dsh-core", _core_version())
    if load_entry_points:
        explicit = {item[0] for item in plugins if isinstance(item, tuple)}
        environ = os.environ if env is None else env
        load_installed(pm, select, explicit, environ, frozenset(CORE_DEFAULTS))
    for item in plugins:
        name, plugin = item if isinstance(item, tuple) else (None, item)
        if name is not None and pm.is_blocked(name):
            # pluggy would skip it silently; for a policy plugin that means no policy
            raise DshError(
                f"plugin {name!r} is passed explicitly but its name is blocked "
                f"(-p no:{name}); unblock it or do not pass it"
            )
        with pm._leaving_out_misfits():
            pm.register(plugin, name)
        for evicted in pm._take_evicted():  # its optionalhook impl misfits this one's spec
            raise evicted
    return pm


def _core_version() -> str:
    from dsh import __version__

    return __version__


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Every registered plugin in registration order, with the hooks it implements."""
    dists: dict[str, tuple[str, str]] = getattr(pm, "distributions", {})
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        hooks = sorted({impl_hook.name for impl_hook in pm.get_hookcallers(plugin) or ()})
        dist, version = dists.get(name, (None, None))
        infos.append(PluginInfo(name, dist, version, tuple(hooks)))
    return infos
