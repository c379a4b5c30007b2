"""A plugin's ``dsh_hookspecs`` however it declares it: a plain attribute, a lazy module
attribute (PEP 562 ``__getattr__``), a ``@property``, a ``__slots__`` member."""

from __future__ import annotations

import types
from typing import Any

import anyio
import pluggy

from dsh import create_plugin_manager, hookimpl

_spec = pluggy.HookspecMarker("dsh")


class Specs:
    @_spec
    def my_own_hook(self, x: int) -> int: ...  # type: ignore[empty-body]


def _lazy_module() -> types.ModuleType:
    module = types.ModuleType("lazyplug")

    def __getattr__(name: str) -> object:
        if name == "dsh_hookspecs":
            return Specs
        raise AttributeError(name)

    @hookimpl
    def my_own_hook(x: int) -> int:
        return x * 2

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.my_own_hook = my_own_hook  # type: ignore[attr-defined]
    return module


class WithProperty:
    @property
    def dsh_hookspecs(self) -> type:
        return Specs

    @hookimpl
    def my_own_hook(self, x: int) -> int:
        return x * 2


class Slotted:
    __slots__ = ("dsh_hookspecs",)

    def __init__(self) -> None:
        self.dsh_hookspecs = Specs

    @hookimpl
    def my_own_hook(self, x: int) -> int:
        return x * 2


class UnsetSlot:
    __slots__ = ("dsh_hookspecs",)

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        pass


def _called(plugin: object) -> list[object]:
    pm = create_plugin_manager(load_entry_points=False)
    pm.register(plugin, "p")
    return anyio.run(lambda: pm.relay.call_collect("my_own_hook", x=2))


def test_a_module_bringing_its_specs_lazily_registers() -> None:
    """Was (since the specs were read with ``inspect.getattr_static``): refused, its
    impl of its own hook taken for an impl of an unknown hook."""
    assert _called(_lazy_module()) == [4]


def test_specs_given_by_a_property_register() -> None:
    """Was: the property object was taken for the specs ("did not find any 'dsh' hooks
    in <property object>")."""
    assert _called(WithProperty()) == [4]


def test_specs_in_a_slot_register() -> None:
    assert _called(Slotted()) == [4]


def test_an_unset_slot_brings_no_specs() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    plugin = UnsetSlot()
    pm.register(plugin, "p")
    assert pm.get_plugin("p") is plugin
