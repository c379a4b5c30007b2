"""Which installed plugins a plugin manager loads, and loading them (for
``dsh.plugins.create_plugin_manager``).

``-p NAME`` forces a plugin on and ``-p no:NAME`` blocks it (of the two, the last given
wins, as in pytest); ``DSH_LOAD_PLUGINS=a,b`` loads only those (empty: none);
``DSH_DISABLE_PLUGIN_AUTOLOAD=1`` loads only what ``-p`` names. dsh-core's own plugins
(``always``) load whatever these say, and naming them is no mistake. A name asked for
that nothing installed has is refused (with the closest one), as is a plugin that fails
to load: named with its distribution and entry point.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING

from dsh._entry_points import FIRST_PARTY, PluginNameClash, dist_name, modules, scan
from dsh._plugin_objects import is_hook_impl, no_hooks_in
from dsh.errors import DshError, PluginLoadError

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["TRUE_VALUES", "last_wins", "load_installed"]

#: The values of DSH_DISABLE_PLUGIN_AUTOLOAD that turn autoload off (lower-cased).
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def load_installed(
    pm: PluginManager,
    select: Sequence[str],
    explicit: Set[str],
    env: Mapping[str, str],
    always: Set[str] = frozenset(),
) -> None:
    """Register the entry points ``select`` and ``env`` choose into ``pm`` (in name
    order), and block those they leave out; ``explicit``: the names of the plugins passed
    explicitly, which ``-p no:NAME`` may name although nothing installed has it. Every
    chosen one is tried, so that one ``PluginLoadError`` names all that fail."""
    found, clashing = scan()
    chosen, blocked = _select(list(found), select, env, always)
    _check_blocked(blocked - explicit, list(found))
    for name in blocked:
        pm.set_blocked(name)
    pm.installed = modules(found)
    failed = []
    for name in chosen:
        try:
            with pm._leaving_out_misfits():
                _load_entry_point(pm, name, found[name], clashing.get(name, []))
        except PluginLoadError as error:
            failed.append(error)
        for evicted in pm._take_evicted():  # an earlier one's impl misfits this one's spec
            ep = found[evicted.plugin]
            failed.append(PluginLoadError(evicted.plugin, dist_name(ep), ep.value, evicted))
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


def _env_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def last_wins(select: Iterable[str]) -> list[str]:
    """``-p`` values, each name's last one only: ``-p no:a -p a`` loads ``a``, and
    ``-p a -p no:a`` blocks it (as in pytest)."""
    last: dict[str, str] = {}
    for item in select:
        name = item.removeprefix("no:")
        last.pop(name, None)  # its place is its last one's
        last[name] = item
    return list(last.values())


def _select(
    available: Sequence[str], select: Iterable[str], env: Mapping[str, str], always: Set[str]
) -> tuple[list[str], set[str]]:
    """Which entry points to load (in name order) and which names to block.

    ``select`` holds ``-p`` values: ``NAME`` forces a plugin on, ``no:NAME`` blocks it
    (the last one of a name wins). ``DSH_LOAD_PLUGINS=a,b`` loads only those (empty:
    none); ``DSH_DISABLE_PLUGIN_AUTOLOAD=1`` loads only what ``-p`` names. Names in
    ``always`` (dsh-core's own plugins, not entry points) are passed over.
    """
    wanted: dict[str, str] = {}  # name -> where it was asked for
    blocked: set[str] = set()
    for item in last_wins(select):
        if item.removeprefix("no:") in always:
            continue
        if item.startswith("no:"):
            blocked.add(item[3:])
        else:
            wanted[item] = f"-p {item}"
    if "DSH_LOAD_PLUGINS" in env:
        for name in _env_list(env["DSH_LOAD_PLUGINS"]):
            if name not in always:
                wanted.setdefault(name, "DSH_LOAD_PLUGINS")
        allowed: set[str] | None = set(wanted)
    elif env.get("DSH_DISABLE_PLUGIN_AUTOLOAD", "").lower() in TRUE_VALUES:
        allowed = set(wanted)
    else:
        allowed = None
    unknown = sorted(set(wanted) - set(available))
    if unknown:
        raise _not_installed([(wanted[name], name) for name in unknown], available)
    chosen = [n for n in available if (allowed is None or n in allowed) and n not in blocked]
    return chosen, blocked


def _check_blocked(blocked: set[str], available: list[str]) -> None:
    """``-p no:NAME`` for a name nothing has: most likely a typo that would leave the
    plugin meant (a policy plugin, say) loaded, so it is refused like ``-p NAME``. Not
    for dsh's own plugins' names: no typo, and the way to go on with a session whose
    stored options are for one that is no longer installed."""
    unknown = sorted(blocked - set(available) - FIRST_PARTY)
    if unknown:
        raise _not_installed([(f"-p no:{name}", name) for name in unknown], available)


def _not_installed(unknown: Sequence[tuple[str, str]], available: Sequence[str]) -> DshError:
    """Each name of ``unknown`` (where it was asked for: ``-p NAME``, ``-p no:NAME``,
    DSH_LOAD_PLUGINS; the name) names no installed plugin: said in one way for each,
    with what is installed and the first one's near miss (as it would be given)."""
    import difflib

    said = "; ".join(f"{where}: no plugin named {name} is installed" for where, name in unknown)
    where, name = unknown[0]
    close = difflib.get_close_matches(name, available, n=1)
    given = where.removesuffix(name) if where.startswith("-p ") else ""  # -p, -p no:
    meant = f"; did you mean {given}{close[0]}?" if close else ""
    return DshError(f"{said} (installed: {', '.join(available) or 'none'}){meant}")


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
        if ep.pattern.match(ep.value) is None:  # load() would fail on a None match
            raise ValueError(_not_a_module(name, ep.value))
        plugin = ep.load()
        if isinstance(plugin, type):  # nothing registers an instance of it
            raise TypeError(
                f"it names the class {plugin.__qualname__}; point it at a module, or at an "
                f'instance made in one ({name} = "{plugin.__module__}:plugin" with '
                f"plugin = {plugin.__qualname__}())"
            )
        if is_hook_impl(plugin):  # registered, it would bring no hooks
            raise TypeError(
                f"it names the hook impl {plugin.__qualname__}; point it at the module it is "
                f'in ({name} = "{plugin.__module__}"), or at an instance made in one'
            )
        what = no_hooks_in(plugin)
        if what is not None:  # registered, it could bring no hooks
            raise TypeError(
                f"it names {what}, which is not a plugin; point it at a module "
                f'({name} = "{ep.module}"), or at an instance made in one'
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


def _not_a_module(name: str, value: str) -> str:
    """What to write in place of an entry point's ``value`` that names no module
    (``dsh-myplugin``, the distribution's name; ``src/dsh_myplugin.py``, a file)."""
    said = (
        f'{value!r} is not a module to import: write {name} = "package.module" (the import '
        "name, not the distribution's or a file's), or \"package.module:name\" for an "
        "object in one"
    )
    module, _, attr = value.partition(":")
    meant = module.strip().removesuffix(".py").replace("/", ".").replace("-", "_")
    meant += f":{attr.strip()}" if attr.strip() else ""
    if meant != value and EntryPoint.pattern.match(meant) is not None:
        said += f"; did you mean {name} = {meant!r}?"
    return said


def _exited(exc: BaseException) -> BaseException:
    """What a plugin raised while loading, as its failure names it: a ``SystemExit``
    (``sys.exit()`` at import) says so and with what exit status dsh would have ended."""
    if not isinstance(exc, SystemExit):
        return exc
    status = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    return SystemExit(f"sys.exit({exc.code!r}) called while loading (exit status {status})")
