"""Every public exception of dsh and of its first-party plugins survives ``copy.copy``,
``copy.deepcopy`` and a ``pickle`` round trip (an error sent to another process by
multiprocessing, concurrent.futures or pytest-xdist) with its type, its message and
every attribute.

Before: only those whose ``__init__`` takes their message alone (and ``ModelError``)
did. An error whose ``__init__`` takes other arguments than its message (``HookError``,
``ConfigError``, ``TurnError``, ``PluginLoadError``, ``EventDataError``,
``PluginValidationError``, persistence's ``UnencodableEventError``) was rebuilt by
calling it with its message alone: ``TypeError``. ``DshError`` now rebuilds each
subclass from its ``args`` and attributes, without its ``__init__``.

The classes are found, not listed: every exception class a public module of ``dsh`` or
of an installed first-party plugin offers, and every ``DshError`` subclass defined in
any of their modules. Each is built with sample arguments made from its ``__init__``'s
annotations (``_sample``): a new error with an argument of a type not known there fails
here until it is added.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import pickle
import pkgutil
import typing
from collections.abc import Callable, Sequence
from types import ModuleType, UnionType
from typing import Any

import pytest

from dsh import DshError, HookError

PACKAGES = ("dsh", "dsh_compaction", "dsh_permissions", "dsh_persistence")
#: In every session (a plugin's are checked where the plugin is installed).
CORE_ERRORS = {"ConfigError", "HookError", "ModelError", "PluginLoadError", "TurnError"}


def _modules() -> list[ModuleType]:
    found = []
    for top in PACKAGES:
        if importlib.util.find_spec(top) is None:
            continue  # a plugin this session does not install
        package = importlib.import_module(top)
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, f"{top}."):
            found.append(importlib.import_module(info.name))
    return found


def _subclasses(cls: type[BaseException]) -> set[type[BaseException]]:
    return {cls}.union(*(_subclasses(sub) for sub in cls.__subclasses__()))


def _errors() -> list[type[BaseException]]:
    modules = _modules()
    ours = {module.__name__ for module in modules}
    found = _subclasses(DshError)
    for module in modules:
        if any(part.startswith("_") for part in module.__name__.split(".")):
            continue
        public = [name for name in vars(module) if not name.startswith("_")]
        for name in getattr(module, "__all__", public):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                found.add(value)
    return sorted(
        (cls for cls in found if cls.__module__ in ours),
        key=lambda cls: (cls.__module__, cls.__qualname__),
    )


ERRORS = _errors()


def _sample(name: str, hint: Any, depth: int) -> Any:
    """A value of type ``hint`` for the argument ``name``, distinct per argument."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (UnionType, typing.Union):  # ``float | None``: the value, not None
        return _sample(name, next(a for a in args if a is not type(None)), depth)
    if origin is typing.Literal:
        return args[-1]
    if origin is Sequence and depth == 0:  # ``more``: one nested error of the kind
        return (_build(args[0], depth + 1),)
    if origin is Sequence:
        return ()
    if hint is str:
        return f"{name} {depth}"
    if hint is int:
        return 40 + len(name)
    if hint is float:
        return 1.5 + len(name)
    if hint is BaseException:
        return KeyError(f"{name} cause")
    raise AssertionError(f"no sample value for {name}: {hint!r}; add one to _sample")


def _build(cls: type[BaseException], depth: int = 0) -> BaseException:
    init: Callable[..., None] = cls.__init__
    if not inspect.isfunction(init):  # a built-in's (Exception's, a Warning's): a message
        return cls(f"what {cls.__name__} says")
    hints = typing.get_type_hints(init)
    positional, keywords = [], {}
    for param in list(inspect.signature(init).parameters.values())[1:]:
        value = _sample(param.name, hints[param.name], depth)
        if param.kind is param.KEYWORD_ONLY:
            keywords[param.name] = value
        else:
            positional.append(value)
    return cls(*positional, **keywords)


def _state(value: Any) -> Any:
    """What an error is made of (exceptions have no ``==``): its type, its args and its
    attributes, those of errors it holds too."""
    if isinstance(value, BaseException):
        return (type(value), _state(value.args), _state(vars(value)))
    if isinstance(value, dict):
        return {key: _state(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return tuple(_state(item) for item in value)
    return value


def _pickled(error: BaseException) -> BaseException:
    rebuilt: BaseException = pickle.loads(pickle.dumps(error))
    return rebuilt


def test_every_error_is_found() -> None:
    names = {cls.__name__ for cls in ERRORS}
    assert names >= CORE_ERRORS
    assert {"UsageError", "LocalModelError", "ToolError", "ArgumentsError"} <= names
    if importlib.util.find_spec("dsh_persistence") is not None:
        assert {"SessionInUseError", "UnencodableEventError"} <= names


@pytest.mark.parametrize("copied", [copy.copy, copy.deepcopy, _pickled])
@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_an_error_copied_or_pickled_keeps_its_message_and_attributes(
    cls: type[BaseException], copied: Callable[[BaseException], BaseException]
) -> None:
    error = _build(cls)
    error.add_note("a note added on the way")
    rebuilt = copied(error)
    assert rebuilt is not error
    assert type(rebuilt) is cls
    assert str(rebuilt) == str(error)
    assert rebuilt.__notes__ == ["a note added on the way"]
    assert _state(rebuilt) == _state(error)
    if isinstance(error, HookError):  # a method reading the attributes still works
        assert rebuilt.for_user() == error.for_user()


class _StoreGone(DshError, FileNotFoundError):
    """A plugin's error that is an ``OSError`` too, built from other arguments: its
    ``args`` come from ``OSError.__new__``, which leaves them to ``__init__``."""

    def __init__(self, path: str) -> None:
        super().__init__(f"store {path} is gone")
        self.path = path


@pytest.mark.parametrize("copied", [copy.copy, copy.deepcopy, _pickled])
def test_an_error_that_is_an_oserror_too_keeps_its_message(
    copied: Callable[[BaseException], BaseException],
) -> None:
    rebuilt = copied(_StoreGone("/x"))
    assert (str(rebuilt), rebuilt.args) == ("store /x is gone", ("store /x is gone",))
    assert isinstance(rebuilt, _StoreGone) and rebuilt.path == "/x"
