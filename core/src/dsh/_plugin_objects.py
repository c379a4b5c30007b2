"""What may be registered as a plugin: a module, or an object (an instance of a class)
holding ``@hookimpl`` functions. Not a class (its impls would be called without an
instance), not a single hook impl, nor an object that can hold no hooks at all (a str,
None, a number, a plain function): pluggy registers these, and each would silently do
nothing, so a test of the plugin would pass without it."""

from __future__ import annotations

import inspect
import types

import pluggy

from dsh._quoted import repr_cut
from dsh.errors import PluginValidationError
from dsh.hookspecs import PROJECT

__all__ = [
    "declared_specs",
    "is_hook_impl",
    "no_hooks_in",
    "not_a_function",
    "not_a_plugin",
    "unmarked",
]

_MARK = f"{PROJECT}_impl"
#: Options every ``@hookimpl`` mark holds (pluggy's ``HookimplOpts``).
_MARK_KEYS = frozenset({"tryfirst", "trylast", "optionalhook", "specname"})


def is_hook_impl(plugin: object) -> bool:
    """Whether ``plugin`` is a function marked ``@hookimpl``, not a plugin holding one."""
    return inspect.isroutine(plugin) and _mark(plugin) is not None


def declared_specs(plugin: object) -> object:
    """The hookspecs ``plugin`` declares in ``dsh_hookspecs``, or None.

    Looked up statically, so that an object whose ``__getattr__`` answers anything (a
    proxy) brings no specs by answering. But ``dsh_hookspecs`` is the attribute a plugin
    declares its specs in, so it is read deliberately where the plugin computes it: a
    ``__slots__`` member (as pluggy reads one), a ``@property`` or other descriptor, and
    a module's own ``__getattr__`` (PEP 562, a module bringing its specs lazily)."""
    found = inspect.getattr_static(plugin, "dsh_hookspecs", None)
    if found is None:
        lazy = isinstance(plugin, types.ModuleType) and "__getattr__" in vars(plugin)
        return getattr(plugin, "dsh_hookspecs", None) if lazy else None
    if isinstance(found, (type, types.ModuleType)):  # the specs themselves
        return found
    if isinstance(found, types.MemberDescriptorType):  # a slot: unset, it holds none
        try:
            return found.__get__(plugin, type(plugin))
        except AttributeError:
            return None
    if hasattr(type(found), "__get__"):  # a property, a classmethod: the plugin's answer
        return getattr(plugin, "dsh_hookspecs", None)
    return found


def _computed(plugin: object, name: str) -> bool:
    """Whether attribute ``name`` of ``plugin`` is computed by the plugin's code as it
    is read (a property, a descriptor class of its own, a ``__getattr__``'s answer), as
    pluggy, which reads attributes statically, never runs it."""
    found = inspect.getattr_static(plugin, name, _MISSING)
    if found is _MISSING:
        return True  # answered by __getattr__ alone
    if isinstance(found, property):
        return True
    get = getattr(type(found), "__get__", None)
    return isinstance(get, types.FunctionType)  # a descriptor written in Python


_MISSING = object()


def _mark(value: object) -> dict[str, object] | None:
    """The ``@hookimpl`` mark ``value`` holds (a bound method: its function's), or None.
    Read without running its code (``__getattr__``, a property), as pluggy reads it: an
    object answering any attribute (addict, python-box) is no impl and must not be given
    a key by looking, nor one raising for any make registering raise that."""
    if isinstance(value, types.MethodType):
        value = value.__func__
    mark = inspect.getattr_static(value, _MARK, None)
    return mark if isinstance(mark, dict) else None


def no_hooks_in(plugin: object) -> str | None:
    """``plugin`` said ("the str 'x'", "None", "the int 42", "the function f") if it is an
    instance of a built-in type (a module, a class and a hook impl aside): one whose
    attributes are its type's, so that it can hold no hook impl; else None. A function
    holding marked functions as attributes is a plugin, as pluggy would take it."""
    kind = type(plugin)
    if getattr(kind, "__module__", None) != "builtins" or isinstance(
        plugin, types.ModuleType | type
    ):
        return None
    if is_hook_impl(plugin):
        return None
    if plugin is None:
        return "None"
    if isinstance(plugin, str | bytes | bool | int | float | complex):
        return f"the {kind.__name__} {repr_cut(plugin)}"
    if inspect.isroutine(plugin):
        if any(_mark(value) is not None for value in getattr(plugin, "__dict__", {}).values()):
            return None
        return f"the function {getattr(plugin, '__qualname__', repr(plugin))}"
    article = "an" if kind.__name__[:1] in "aeiou" else "a"
    return f"{article} {kind.__name__} ({repr_cut(plugin)})"


def not_a_plugin(plugin: object, name: str | None) -> PluginValidationError | None:
    """The error registering ``plugin`` (under ``name``, if given) is refused with if
    it can hold no hooks (``no_hooks_in``), or is a callable marked ``@hookimpl`` that is
    no function (a ``functools.partial``: it holds no hooks, nor is it one), saying what
    to pass instead; else None."""
    marked = None if isinstance(plugin, type) else not_a_function("it", plugin)
    if marked is not None:
        why = f"{marked.removeprefix('it: ')}; register the module (or instance) holding that def"
        return PluginValidationError(name or _said(plugin), why)
    what = no_hooks_in(plugin)
    if what is None:
        return None
    if isinstance(plugin, str):  # a plugin's name, as pytest's -p takes it
        why = f"{what} is not a plugin; pass the module, not its name: import it"
    elif inspect.isroutine(plugin):
        why = (
            f"{what} is not a plugin; register the module it is in (or an instance of its "
            "class), with its hooks marked @hookimpl"
        )
    else:
        why = (
            f"{what} is not a plugin; pass a module, or an instance of a class, holding "
            "@hookimpl functions"
        )
    return PluginValidationError(name or _said(plugin), why)


def _said(plugin: object) -> str:
    """An unnamed non-plugin as its error names it: a str as it is, ``f`` for a function."""
    if isinstance(plugin, str):
        return plugin
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) else repr_cut(plugin)


def not_a_function(name: str, value: object) -> str | None:
    """Why attribute ``name`` of a plugin, ``value``, marked ``@hookimpl`` but not a
    function or method (``hookimpl(functools.partial(...))``, an object with an async
    ``__call__``), would never be called, or None: pluggy takes only routines as impls
    and passes over anything else without a word."""
    if inspect.isroutine(value):
        return None
    mark = _mark(value)
    if mark is None or not mark.keys() >= _MARK_KEYS:  # not what @hookimpl sets
        return None
    kind = type(value)
    what = f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")
    return (
        f"{name}: marked @hookimpl but a {what}, not a function, so dsh (like pluggy) would "
        "never call it; wrap it in a def that calls it (an async def to await what it "
        "returns) and mark that def"
    )


def unmarked(hooks: object, plugin: object, name: str) -> str | None:
    """Why ``plugin``'s attribute ``name``, not marked ``@hookimpl``, is a mistake, or
    None: a function of the plugin's own named like a hook (in ``hooks``, the manager's
    hook relay) would never be called, as pluggy passes over it without a word; and so
    would a marked value that is not a function (``not_a_function``). Read as pluggy
    reads it: a property or other descriptor computing the value is not run."""
    if _computed(plugin, name):
        return None
    try:
        value = getattr(plugin, name)
    except Exception:  # pluggy reads it again and reports what fails
        return None
    not_called = not_a_function(name, value)
    if not_called is not None:
        return not_called
    caller = getattr(hooks, name, None)
    if not isinstance(caller, pluggy.HookCaller) or not caller.has_spec():
        return None
    if isinstance(plugin, types.ModuleType):  # its own function, not one imported
        own = getattr(value, "__module__", None) == plugin.__name__
    else:  # a method of the object
        own = getattr(value, "__self__", None) is plugin
    if own and inspect.isroutine(value):
        return (
            f"{name}: named like the hook {name!r} but not marked @hookimpl, so dsh "
            "would never call it; add @hookimpl (from dsh import hookimpl)"
        )
    return None
