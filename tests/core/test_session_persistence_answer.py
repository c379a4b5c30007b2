"""What a ``session_persistence`` impl answers is checked as the interception hooks'
answers are (from a third-party plugin author's review): an answer that is no
``SessionPersistence`` is that impl's failure, a ``HookError`` naming the plugin, the
hook and the methods it lacks. Before: it was used as it was, and resuming crashed later
with ``AttributeError: 'str' object has no attribute 'load'`` (a raw traceback from
``dsh run --continue``), naming no plugin.

The check looks each method up as a caller would (``getattr``, and it must be callable),
not by ``isinstance`` against the runtime-checkable Protocol: since Python 3.12 that
looks only at the class (``inspect.getattr_static``), so a store that forwards to
another through ``__getattr__`` (a wrapper plugin) was refused on 3.12 and 3.13, naming
no missing method, and accepted on 3.11; and an attribute of that name that is no method
passed everywhere (from a re-review)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import DshError, HookError, hookimpl
from dsh.persistence import SessionHeader
from dsh.plugins import PluginManager
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness


class Answers:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    @hookimpl
    def session_persistence(self) -> Any:
        return self.answer


class ListsOnly:
    """A store missing ``load`` and ``delete``."""

    async def list(self) -> list[SessionHeader]:
        return []


class Forwards:
    """A wrapper plugin's store: every method is the wrapped store's, by ``__getattr__``."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class ListIsNoMethod:
    """``list`` is there, but no method (``isinstance`` accepted it on every Python)."""

    list = ("not", "callable")

    async def load(self, session_id: str) -> None:
        return None

    async def delete(self, session_id: str) -> bool:
        return False


async def test_an_answer_of_another_type_is_the_plugins_failure(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    dsh_register(Answers("not a store"), "store")
    with pytest.raises(HookError) as failed:
        await dsh_pm.relay.session_persistence()
    assert (failed.value.plugin, failed.value.hook) == ("store", "session_persistence")
    assert str(failed.value.cause) == (
        "returned str where SessionPersistence is expected (it has no list, load, delete)"
    )


async def test_resuming_through_a_store_missing_methods_names_the_plugin() -> None:
    plugins = [("store", Answers(ListsOnly()))]
    async with scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False) as h:
        with pytest.raises(HookError) as failed:
            await h.agents.resume("a", "some-session")
    assert str(failed.value) == (
        "plugin 'store' failed in hook session_persistence (impl Answers.session_persistence()): "
        "TypeError: returned ListsOnly where SessionPersistence is expected "
        "(it has no load, delete)"
    )


async def test_a_store_is_accepted(dsh_pm: PluginManager, dsh_register: Any) -> None:
    store = InMemoryPersistence()
    dsh_register(store, "store")
    assert await dsh_pm.relay.session_persistence() is store


async def test_a_store_forwarding_by_getattr_is_accepted(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    store = Forwards(InMemoryPersistence())
    dsh_register(Answers(store), "store")
    assert await dsh_pm.relay.session_persistence() is store


async def test_resuming_through_a_forwarding_store_reaches_the_store() -> None:
    plugins = [("store", Answers(Forwards(InMemoryPersistence())))]
    async with scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False) as h:
        with pytest.raises(DshError) as failed:
            await h.agents.resume("a", "nope")
    assert not isinstance(failed.value, HookError)
    assert str(failed.value) == "cannot resume session 'nope': it is not stored"


async def test_an_attribute_that_is_no_method_is_refused(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    dsh_register(Answers(ListIsNoMethod()), "store")
    with pytest.raises(HookError) as failed:
        await dsh_pm.relay.session_persistence()
    assert str(failed.value.cause) == (
        "returned ListIsNoMethod where SessionPersistence is expected (its list is not a method)"
    )
