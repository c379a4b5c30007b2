"""The plugin manager: creation, entry-point selection and loading, validation, listing
(which entry points are installed: ``dsh._entry_points``).

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
import inspect
import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

import pluggy

from dsh import hookspecs
from dsh._calling import Dispatcher, Reporter, default_reporter, is_async_function
from dsh._entry_points import (
    ENTRY_POINT_GROUP,
    PluginNameClash,
    clashes,
    dist_name,
    installed_plugins,
    modules,
    scan,
)
from dsh._impl_arguments import arguments_problem
from dsh._relay import HookRelay
from dsh.errors import DshError, HookError, PluginLoadError, PluginValidationError

__all__ = [
    "ENTRY_POINT_GROUP",
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
#: The values of DSH_DISABLE_PLUGIN_AUTOLOAD that turn autoload off (lower-cased).
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


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

    def is_left_out(self, name: str) -> bool:
        """Whether ``name`` is an installed plugin that does not run (see
        ``dsh._left_out``): settings for it would apply to nothing."""
        from dsh._left_out import left_out

        return left_out(self, name)

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin``; a plugin module may bring its own hookspecs in a
        ``dsh_hookspecs`` attribute (a module or class), added before its impls."""
        name = name or self.get_canonical_name(plugin)
        if isinstance(plugin, type):  # its impls would be called without an instance
            raise PluginValidationError(
                name, f"{plugin.__qualname__} is a class; register an instance of it"
            )
        # pluggy says only "already registered"; say by what, and what to do
        taken = self.get_name(plugin) if self.is_registered(plugin) else None
        if taken is not None or self.get_plugin(name) is not None:
            raise PluginValidationError(name, self._taken(name, taken))
        specs = getattr(plugin, "dsh_hookspecs", None)
        if specs is not None:
            self.add_hookspecs(specs)
        self._registering = name
        try:
            registered = super().register(plugin, name)
        finally:
            self._registering = None
        self.dispatcher.invalidate()
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

    def add_hookspecs(self, module_or_class: Any) -> None:
        super().add_hookspecs(module_or_class)
        if hasattr(self, "dispatcher"):
            self.dispatcher.invalidate()

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            self._check_unmarked(plugin, name)
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
            from dsh._config_yaml import did_you_mean

            typo = did_you_mean(hook, self._hook_names())
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

    def _hook_names(self) -> list[str]:
        """The hooks with a spec: the core's, and those plugins added."""
        callers = vars(self.hook).values()
        return [c.name for c in callers if isinstance(c, pluggy.HookCaller) and c.has_spec()]

    def _check_unmarked(self, plugin: object, name: str) -> None:
        """A function named like a hook but not marked would never be called: pluggy
        passes over it without a word, so the plugin would silently do nothing."""
        caller = getattr(self.hook, name, None)
        if not isinstance(caller, pluggy.HookCaller) or not caller.has_spec():
            return
        try:
            value = getattr(plugin, name)
        except Exception:  # pluggy reads it again and reports what fails
            return
        if isinstance(plugin, types.ModuleType):  # its own function, not one imported
            own = getattr(value, "__module__", None) == plugin.__name__
        else:  # a method of the object
            own = getattr(value, "__self__", None) is plugin
        if own and inspect.isroutine(value):
            raise PluginValidationError(
                self._registering or repr(plugin),
                f"{name}: named like the hook {name!r} but not marked @hookimpl, so dsh "
                "would never call it; add @hookimpl (from dsh import hookimpl)",
            )


def _env_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _select(
    available: Sequence[str], select: Iterable[str], env: Mapping[str, str]
) -> tuple[list[str], set[str]]:
    """Which entry points to load (in name order) and which names to block.

    ``select`` holds ``-p`` values: ``NAME`` forces a plugin on, ``no:NAME`` blocks it.
    ``DSH_LOAD_PLUGINS=a,b`` loads only those (empty: none);
    ``DSH_DISABLE_PLUGIN_AUTOLOAD=1`` loads only what ``-p`` names.
    """
    wanted: dict[str, str] = {}  # name -> where it was asked for
    blocked: set[str] = set()
    for item in select:
        if item.startswith("no:"):
            blocked.add(item[3:])
        else:
            wanted[item] = f"-p {item}"
    if "DSH_LOAD_PLUGINS" in env:
        for name in _env_list(env["DSH_LOAD_PLUGINS"]):
            wanted.setdefault(name, "DSH_LOAD_PLUGINS")
        allowed: set[str] | None = set(wanted)
    elif env.get("DSH_DISABLE_PLUGIN_AUTOLOAD", "").lower() in TRUE_VALUES:
        allowed = set(wanted)
    else:
        allowed = None
    unknown = sorted(set(wanted) - set(available))
    if unknown:
        installed = ", ".join(available) or "none"
        names = ", ".join(f"{name} (from {wanted[name]})" for name in unknown)
        raise DshError(
            f"no plugin named {names} is installed (installed: {installed})"
            + _did_you_mean(unknown[0], available)
        )
    chosen = [n for n in available if (allowed is None or n in allowed) and n not in blocked]
    return chosen, blocked


def _check_blocked(blocked: set[str], available: list[str]) -> None:
    """``-p no:NAME`` for a name nothing has: most likely a typo that would leave the
    plugin meant (a policy plugin, say) loaded, so it is refused like ``-p NAME``."""
    unknown = sorted(blocked - set(available))
    if unknown:
        installed = ", ".join(available) or "none"
        raise DshError(
            f"-p no:{unknown[0]}: no plugin named {unknown[0]} is installed "
            f"(installed: {installed})" + _did_you_mean(unknown[0], available, "-p no:")
        )


def _did_you_mean(name: str, available: Sequence[str], prefix: str = "") -> str:
    import difflib

    close = difflib.get_close_matches(name, available, n=1)
    return f"; did you mean {prefix}{close[0]}?" if close else ""


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
    ``-p`` values; ``env`` defaults to ``os.environ``.
    """
    pm = PluginManager(report)
    select = list(select)
    plugins = list(plugins)
    for module in CORE_DEFAULTS:
        if f"no:{module}" in select:  # the core's own plugins can be blocked too
            pm.set_blocked(module)
            continue
        pm.register(importlib.import_module(module), module)
        pm.distributions[module] = ("dsh-core", _core_version())
    if load_entry_points:
        found, clashing = scan()
        entry_selection = [item for item in select if item[3:] not in CORE_DEFAULTS]
        chosen, blocked = _select(list(found), entry_selection, os.environ if env is None else env)
        explicit = {item[0] for item in plugins if isinstance(item, tuple)}
        _check_blocked(blocked - explicit, list(found))
        for name in blocked:
            pm.set_blocked(name)
        pm.installed = modules(found)
        failed = []
        for name in chosen:  # every one is tried, so that one run names all that fail
            try:
                _load_entry_point(pm, name, found[name], clashing.get(name, []))
            except PluginLoadError as error:
                failed.append(error)
        if failed:
            first = failed[0]
            raise PluginLoadError(
                first.name,
                first.distribution,
                first.value,
                first.cause,
                failed[1:],
                uninstall=first.uninstall,
            ) from first.cause
    for item in plugins:
        name, plugin = item if isinstance(item, tuple) else (None, item)
        if name is not None and pm.is_blocked(name):
            # pluggy would skip it silently; for a policy plugin that means no policy
            raise DshError(
                f"plugin {name!r} is passed explicitly but its name is blocked "
                f"(-p no:{name}); unblock it or do not pass it"
            )
        pm.register(plugin, name)
    return pm


def _load_entry_point(
    pm: PluginManager, name: str, ep: EntryPoint, clash: Sequence[EntryPoint]
) -> None:
    dist = dist_name(ep)
    if clash:
        each = " and ".join(f"{dist_name(one)} ({name} = {one.value})" for one in clash)
        why = f"two installed distributions define the dsh plugin {name!r}: {each}"
        either = " or ".join(dist_name(one) for one in clash)
        clashed = PluginNameClash(f"{why}; uninstall one")
        raise PluginLoadError(name, dist, ep.value, clashed, uninstall=either)
    try:
        plugin = ep.load()
        if isinstance(plugin, type):  # nothing registers an instance of it
            raise TypeError(
                f"it names the class {plugin.__qualname__}; point it at a module, or at an "
                f'instance made in one ({name} = "{plugin.__module__}:plugin" with '
                f"plugin = {plugin.__qualname__}())"
            )
        pm.register(plugin, name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import too: this plugin's failure
        if isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt):
            raise
        raise PluginLoadError(name, dist, ep.value, _exited(exc)) from exc
    version = ep.dist.version if ep.dist is not None else "?"
    pm.distributions[name] = (dist, version)


def _exited(exc: BaseException) -> BaseException:
    """What a plugin raised while loading, as its failure names it: a ``SystemExit``
    (``sys.exit()`` at import) says so and with what exit status dsh would have ended."""
    if not isinstance(exc, SystemExit):
        return exc
    status = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    return SystemExit(f"sys.exit({exc.code!r}) called while loading (exit status {status})")


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
