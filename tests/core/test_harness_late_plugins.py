"""A plugin registered after the harness started: the hooks the harness calls once while
it starts never run for it, and ``LatePluginWarning`` says so, naming the plugin and
those hooks (was: its tool was an "unknown tool", with nothing said)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from dsh import hookimpl
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
