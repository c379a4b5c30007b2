"""A plugin registered after the harness started: the hooks the harness calls once while
it starts never run for it, and ``LatePluginWarning`` says so, naming the plugin and
those hooks (was: its tool was an "unknown tool", with nothing said)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from dsh import HookError, hookimpl
from dsh.harness import Harness
from dsh.plugins import LatePluginWarning


class Late:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        pass

    @hookimpl
    def register_settings(self, register: Any) -> None:
        pass

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        pass

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        pass


class Observer:
    @hookimpl
    def agent_created(self, agent: Any) -> None:
        pass


async def test_a_plugin_registered_late_is_warned_of_naming_the_hooks_that_never_run() -> None:
    async with Harness(load_entry_points=False) as harness:
        with pytest.warns(LatePluginWarning) as caught:
            harness.pm.register(Late(), "late")
        (warning,) = caught
        said = str(warning.message)
        assert said.startswith("plugin 'late' was registered after the harness started")
        assert "register_settings, register_tools, harness_started impls will never run" in said
        assert warning.filename == __file__  # the line that registered it
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            harness.pm.register(Observer(), "observer")  # no start-up hook: nothing to say
            harness.pm.unregister(name="late")


async def test_no_warning_for_a_plugin_registered_before_start_or_after_exit() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        harness = Harness(plugins=[("early", Late())], load_entry_points=False)
        async with harness:
            pass
        harness.pm.register(Late(), "after")  # nothing runs any more: not this one's news


class Counted(Late):
    """``Late`` that records which of its start-up impls ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        self.ran.append("register_tools")

    @hookimpl
    def register_settings(self, register: Any) -> None:
        self.ran.append("register_settings")

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        self.ran.append("harness_started")


class Registers:
    """Registers ``late`` as "late" from its impl of start-up hook ``hook``."""

    def __init__(self, hook: str, late: object) -> None:
        self.hook, self.late = hook, late
        self.pm: Any = None

    def _from(self, hook: str) -> None:
        if hook == self.hook:
            self.pm.register(self.late, "late")

    @hookimpl
    def register_settings(self, register: Any) -> None:
        self._from("register_settings")

    @hookimpl
    def register_models(self, register: Any) -> None:
        self._from("register_models")

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        self._from("harness_started")


@pytest.mark.parametrize(
    ("hook", "missed", "said"),
    [
        (
            "harness_started",
            ["register_settings", "register_tools", "harness_started"],
            "plugin 'late' was registered after the harness started, so its "
            "register_settings, register_tools, harness_started impls will never run",
        ),
        (
            "register_models",
            ["register_settings"],
            "plugin 'late' was registered while the harness was starting (from its "
            "register_models call on), so its register_settings impl will never run",
        ),
        (
            "register_settings",
            ["register_settings"],
            "plugin 'late' was registered while the harness was starting (from its "
            "register_settings call on), so its register_settings impl will never run",
        ),
    ],
)
async def test_a_plugin_registered_while_the_harness_starts_is_warned_of_what_it_misses(
    hook: str, missed: list[str], said: str
) -> None:
    """A call walks the impls there were when it began: a plugin registered from an impl
    of a start-up hook misses that hook and the ones called before it, and only those
    (was: a plugin registered from a ``register_*`` impl was not warned of at all)."""
    late = Counted()
    registers = Registers(hook, late)
    harness = Harness(plugins=[("registers", registers)], load_entry_points=False)
    registers.pm = harness.pm
    with pytest.warns(LatePluginWarning) as caught:
        async with harness:
            pass
    (warning,) = caught
    assert str(warning.message).startswith(said + " (")
    ran = ["register_settings", "register_tools", "harness_started"]
    assert late.ran == [one for one in ran if one not in missed]  # what it says, exactly


async def test_a_late_plugin_refused_by_the_warning_as_an_error_is_not_registered() -> None:
    """Under ``-W error::dsh.plugins.LatePluginWarning`` the registration raises: was
    after pluggy had registered the plugin, so its hooks ran though ``register`` failed.
    Now a ``register`` that raises has registered nothing."""
    async with Harness(load_entry_points=False) as harness:
        with warnings.catch_warnings():
            warnings.simplefilter("error", LatePluginWarning)
            with pytest.raises(LatePluginWarning, match=r"^plugin 'late' was registered"):
                harness.pm.register(Late(), "late")
        assert harness.pm.get_plugin("late") is None
        assert not harness.relay.implemented("agent_created")
        with pytest.warns(LatePluginWarning):  # allowed again: registered, and warned
            harness.pm.register(Late(), "late")
        assert harness.relay.implemented("agent_created")


class Failing:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        raise RuntimeError("no tools today")


async def test_a_harness_that_failed_to_start_no_longer_warns() -> None:
    """The listener is added before the first start-up hook: a start that fails removes
    it again, even one failing before the harness has a task group to leave."""
    harness = Harness(plugins=[("failing", Failing())], load_entry_points=False)
    with pytest.raises(HookError, match="no tools today"):
        async with harness:
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        harness.pm.register(Late(), "after")  # nothing runs any more: not this one's news


async def test_two_harnesses_sharing_a_plugin_manager_warn_once() -> None:
    """Was: each harness's listener warned, the same warning twice."""
    first = Harness(load_entry_points=False)
    second = Harness(pm=first.pm)
    async with first, second:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first.pm.register(Late(), "late")
            first.pm.unregister(name="late")
            first.pm.register(Late(), "late")  # another registration: warned again
    said = [str(w.message) for w in caught if w.category is LatePluginWarning]
    assert len(said) == 2 and all("'late'" in one for one in said), said


async def test_a_registration_that_raised_is_warned_of_again_when_retried() -> None:
    first = Harness(load_entry_points=False)
    second = Harness(pm=first.pm)
    late = Late()
    async with first, second:
        for _ in range(2):
            with warnings.catch_warnings():
                warnings.simplefilter("error", LatePluginWarning)
                with pytest.raises(LatePluginWarning):
                    first.pm.register(late, "late")
            assert first.pm.get_plugin("late") is None
