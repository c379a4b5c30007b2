"""Options for one of dsh's own plugins that is not installed (``permissions`` with
dsh-core alone), given in code or stored with a session: refused as ``dsh.yml``'s are
(a stored session resumed without options too, naming it). Before, each was
taken as a free key: an agent's deny rules applied to nothing without a word.

The plugin manager here has nothing installed (``pm.installed = {}``), as with dsh-core
alone."""

from __future__ import annotations

import logging
import time

import pytest

from dsh import DshError
from dsh.persistence import StoredSession
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness

RULES = {"permissions": {"deny": ["bash"]}}
REFUSED = (
    "option 'permissions' is for dsh-permissions, which is not installed: install "
    "dsh-permissions, or remove the option"
)


def core_alone(*blocked: str) -> PluginManager:
    pm = create_plugin_manager([], load_entry_points=False)
    pm.installed = {}
    for name in blocked:
        pm.set_blocked(name)
    return pm


def stored(session_id: str) -> StoredSession:
    return StoredSession(session_id, time.time(), [], {"agent": "b", "options": dict(RULES)})


async def test_options_in_code_for_a_missing_first_party_plugin_are_refused() -> None:
    async with scripted_harness(ScriptedModel([]), pm=core_alone()) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options=dict(RULES))
    assert str(caught.value) == f"agent 'a': {REFUSED}"


async def test_a_session_storing_them_is_refused_when_they_are_passed_on() -> None:
    """As ``dsh run --continue`` passes a session's stored options on."""
    async with scripted_harness(ScriptedModel([]), pm=core_alone()) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.resume_stored("b", stored("b-session-1"), dict(RULES))
    assert str(caught.value) == (
        f"agent 'b': {REFUSED} (the 'permissions' options stored with session "
        "b-session-1: -p no:permissions goes on without them)"
    )


async def test_a_session_storing_them_resumed_without_options_is_refused() -> None:
    """As options given in code are (was: a warning, and the agent went on without its
    deny rules)."""
    async with scripted_harness(ScriptedModel([]), pm=core_alone()) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.resume_stored("b", stored("b-session-2"))
    assert str(caught.value) == (
        f"agent 'b': {REFUSED} (the 'permissions' options stored with session "
        "b-session-2: pass options= without them)"
    )


async def test_turned_off_they_are_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    async with scripted_harness(ScriptedModel([]), pm=core_alone("permissions")) as h:
        with caplog.at_level(logging.WARNING, logger="dsh.config"):
            await h.agents.create("a", options=dict(RULES))
            await h.agents.resume_stored("b", stored("b-session-3"), dict(RULES))
    assert "turned off (-p no:permissions)" in caplog.text


async def test_a_turned_off_plugin_s_option_is_warned_about_for_each_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning was skipped for an agent whose option equalled another dsh.yml
    agent's (whose own warning named that agent's place, not this one's)."""
    config = "agents:\n  - id: y\n    options:\n      permissions: {deny: [bash]}\n"
    model = ScriptedModel([])
    async with scripted_harness(model, pm=core_alone("permissions"), config_text=config) as h:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="dsh.config"):
            await h.agents.create("x", options=dict(RULES))
    assert "option 'permissions' is ignored: plugin 'permissions' is turned off" in caplog.text


@pytest.mark.plugins("permissions")
async def test_a_subclass_of_the_plugin_under_another_name_stands_in() -> None:
    from dsh_permissions import Permissions

    class Mine(Permissions):
        pass

    pm = core_alone()
    pm.register(Mine(), "mine")
    async with scripted_harness(ScriptedModel([]), pm=pm) as h:
        await h.agents.create("a", options=dict(RULES))


def test_in_dsh_yml_turned_off_and_missing_they_are_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from dsh.config import load_config

    text = "agents:\n  - id: main\n    options:\n      permissions: {deny: [bash]}\n"
    with caplog.at_level(logging.WARNING, logger="dsh.config"):
        load_config(
            text=text, settings={}, missing=lambda name: True, blocked={"permissions"}.__contains__
        )
    assert "agents[0].options.permissions is ignored: plugin 'permissions' is turned off" in (
        caplog.text
    )
