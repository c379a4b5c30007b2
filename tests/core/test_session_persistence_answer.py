"""What a ``session_persistence`` impl answers is checked as the interception hooks'
answers are (from a third-party plugin author's review): an answer that is no
``SessionPersistence`` is that impl's failure, a ``HookError`` naming the plugin, the
hook and the methods it lacks. Before: it was used as it was, and resuming crashed later
with ``AttributeError: 'str' object has no attribute 'load'`` (a raw traceback from
``dsh run --continue``), naming no plugin."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import HookError, hookimpl
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
