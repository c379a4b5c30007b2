"""``harness.agents.resume`` (``resume_stored``, ``fork``) without ``options``: the
options stored with the session are checked as ``agents.create`` checks the options it
is given, and a bad one is refused before the agent starts, naming the session, the
option and the way out in code (``options=`` replaces the stored ones). Before, they
were taken unchecked: a typo'd key resumed silently, a bad value failed late (a core
one once the agent was built, a plugin's when the plugin read it), and options for one
of dsh's own plugins no longer installed were only warned about. (The command line
checks what it passes on: test_stored_options_note.py.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from test_stored_options_note import StrictSettings

from dsh import DshError
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text

WAY = "passing options= replaces the stored ones"


async def stored_with(options: dict[str, Any]) -> InMemoryPersistence:
    """A store holding session ``a-session-1`` of agent ``a`` (one finished turn: a fork
    may be taken at it), its stored options made ``options`` since (as a plugin turned
    off when it was stored would have let them be)."""
    store = InMemoryPersistence()
    plugins = [("mem", store)]
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", "a-session-1", options={"model": "scripted"})
        await run_turn(agent, "hi")
    store.stored["a-session-1"].meta["options"] = options
    return store


async def refused(
    options: dict[str, Any], how: str = "resume", pm: PluginManager | None = None
) -> str:
    """What resuming (``how``) session ``a-session-1``, stored with ``options``, without
    options of its own is refused with."""
    store = await stored_with(options)
    plugins = [("mem", store), ("strict", StrictSettings())]
    async with scripted_harness(
        ScriptedModel([]), plugins=plugins, load_entry_points=False, pm=pm
    ) as h:
        agents = h.agents
        starts = {
            "resume": lambda: agents.resume("b", "a-session-1"),
            "resume_stored": lambda: agents.resume_stored("b", stored),
            "fork": lambda: agents.fork("b", "a-session-1", 1, "a-fork"),
        }
        stored = await agents.load_stored("a-session-1")
        with pytest.raises(DshError) as caught:
            await starts[how]()
        assert agents.list() == []  # nothing started
    assert "a-fork" not in store.stored
    return str(caught.value)


@pytest.mark.parametrize("how", ["resume", "resume_stored", "fork"])
async def test_a_bad_stored_plugin_option_names_the_session_and_the_way_out(how: str) -> None:
    said = await refused({"model": "scripted", "strict": {"sise": 2}}, how)
    assert said == (
        "agent 'b': option strict.sise: unknown key (expected one of: size); did you mean "
        f"'size'? (the 'strict' options stored with session a-session-1: {WAY})"
    )


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (
            {"max_step": 3},
            "unknown option 'max_step' (not a core option or a loaded plugin's name); "
            "did you mean 'max_steps'? (the 'max_step' option",
        ),
        ({"max_steps": 0}, "option 'max_steps' must be an int > 0, not 0 (the 'max_steps' option"),
        (
            {"model": "gone"},
            "model 'gone' is not registered (registered: scripted) (the 'model' option",
        ),
        ({"strict": {"size": "big"}}, "option strict.size: "),
    ],
    ids=["typo", "core-value", "model", "plugin-value"],
)
async def test_each_kind_of_bad_stored_option_is_refused_before_the_agent_starts(
    options: dict[str, Any], problem: str
) -> None:
    said = await refused(options)
    assert said.startswith(f"agent 'b': {problem}")
    assert said.endswith(f" stored with session a-session-1: {WAY})")


def installed(names: dict[str, str], *blocked: str) -> PluginManager:
    """A manager whose installed plugins are ``names`` (name -> module), none loaded."""
    pm = create_plugin_manager([], load_entry_points=False)
    pm.installed = names
    for name in blocked:
        pm.set_blocked(name)
    return pm


async def test_options_for_a_first_party_plugin_not_installed_are_refused() -> None:
    said = await refused({"permissions": {"deny": ["bash"]}}, pm=installed({}))
    assert said == (
        "agent 'b': option 'permissions' is for dsh-permissions, which is not installed: "
        "install dsh-permissions, or remove the option (the 'permissions' options stored "
        "with session a-session-1: pass options= without them)"
    )


async def test_options_for_a_plugin_left_out_are_refused() -> None:
    said = await refused({"audit": {"level": 2}}, pm=installed({"audit": "dsh_audit"}))
    assert said == (
        "agent 'b': option 'audit': plugin 'audit' is installed but not loaded, so nothing "
        "would apply these settings (the 'audit' options stored with session a-session-1: "
        "load it, or pass options= without them)"
    )


async def test_options_for_a_plugin_turned_off_are_warned_about_naming_the_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = await stored_with({"audit": {"level": 2}})
    pm = installed({"audit": "dsh_audit"}, "audit")
    async with scripted_harness(ScriptedModel([]), plugins=[("mem", store)], pm=pm) as h:
        with caplog.at_level(logging.WARNING, logger="dsh.config"):
            agent = await h.agents.resume("b", "a-session-1")
        assert agent.agent.options["audit"] == {"level": 2}  # stored on, as before
    assert "session a-session-1: its 'audit' options are ignored: plugin 'audit' is turned " in (
        caplog.text
    )


async def test_options_given_replace_the_stored_ones_unchecked_as_before() -> None:
    store = await stored_with({"strict": {"sise": 2}})
    plugins = [("mem", store), ("strict", StrictSettings())]
    model = ScriptedModel([text("again")])
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.resume("b", "a-session-1", {"model": "scripted"})
        assert (await agent.prompt("go on")).text == "again"


class Claims(InMemoryPersistence):
    """The in-memory store, noting the claims taken (dsh._claims; one let go again
    stays noted)."""

    def __init__(self) -> None:
        super().__init__()
        self.claims: list[str] = []

    async def claim(self, session_id: str, events: Any) -> None:
        self.claims.append(session_id)


@pytest.mark.parametrize("bad", [{"max_steps": 0}, {"queue_mode": "one-at-time"}])
async def test_a_bad_core_option_given_to_a_resume_is_refused_before_the_claim(
    bad: dict[str, Any],
) -> None:
    """A core option given with ``options=`` is checked before the session is claimed,
    as a plugin's option is (it was checked only as the agent was built, the session
    claimed from the store and let go again)."""
    store = Claims()
    async with scripted_harness(
        ScriptedModel([text("ok")]), plugins=[("mem", store)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", "a-session-1", options={"model": "scripted"})
        await run_turn(agent, "hi")
        await agent.dispose()
        store.claims.clear()
        with pytest.raises(DshError, match=f"agent 'b': option '{next(iter(bad))}' must be"):
            await h.agents.resume("b", "a-session-1", {"model": "scripted", **bad})
        assert store.claims == []  # never claimed: refused first
        assert h.agents.list() == []
