"""Settings, approvals and the gate itself, pinned where a hand mutation review of
``_rules``, ``_settings``, ``_approvals`` and ``_plugin`` found no test."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from permissions_util import FakeAgent, make_tools

import dsh_permissions
from dsh import ToolCall, create_plugin_manager, hookimpl
from dsh.session import Session
from dsh_permissions import PermissionAnswer
from dsh_permissions._approvals import DECISION_EVENT, GrantLog
from dsh_permissions._rules import parse_rule
from dsh_permissions._settings import InvalidSettings, PermissionSettings, validate_options

pytestmark = pytest.mark.plugins("permissions")


async def gate(layout: Any, options: dict[str, Any], name: str, arguments: str) -> dict[str, Any]:
    """One call through the plugin with no front end loaded; its decision event."""
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {"permissions": options})
    await pm.relay.tools_execute(agent, ToolCall(id="c", name=name, arguments=arguments), 1, 1)
    (event,) = [e.data for e in agent.session.events if e.type == DECISION_EVENT]
    return event


def test_a_pattern_holding_a_nul_byte_is_refused_when_the_settings_are_read():
    """A rule no value can ever match is malformed: it is refused, naming the key,
    when the settings are read (docs/permissions.md, Settings reference)."""
    with pytest.raises(ValueError, match="NUL"):
        parse_rule("read(.env\x00)")
    with pytest.raises(InvalidSettings, match=r"options\.permissions\.deny\[0\]: .*NUL"):
        validate_options({"deny": ["read(.env\x00)"]}, "main")
    with pytest.raises(ValueError, match="NUL"):
        PermissionSettings(deny=("read(.env\x00)",))


def test_an_answer_can_only_be_once_always_or_deny_with_a_text_message():
    """``PermissionAnswer("no")`` raises, so a front end that builds one fails and the
    call is denied (docs/permissions.md, Approvals); a message is text."""
    with pytest.raises(ValueError, match="once, always, deny"):
        PermissionAnswer("no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="message must be a str"):
        PermissionAnswer.deny(42)  # type: ignore[arg-type]


async def test_with_no_front_end_loaded_the_reason_says_so(layout):
    """B48: an ask with nobody to ask is a deny, and the reason says there is no
    front end (a non-interactive run), not that one declined."""
    event = await gate(layout, {}, "deploy", "{}")
    assert event["decision"] == "deny"
    assert (
        "no front end that can ask a person is loaded (a non-interactive run, such as "
        "dsh run with no terminal; a rule in permissions.allow lets such a call run "
        "without asking)"
    ) in event["reason"]


async def test_an_unknown_tool_is_denied_as_not_registered(layout):
    """A tool the registry does not know is asked about, and with nobody to ask the
    reason says it is not registered (docs/permissions.md, Unknown tools)."""
    event = await gate(layout, {}, "mcp_mystery", "{}")
    assert event["decision"] == "deny"
    assert "'mcp_mystery' is not a registered tool" in event["reason"]


async def test_grants_come_only_from_well_formed_decision_events():
    """Only a ``permission/decision`` event answered "always" grants, and only its
    entries whose tool, kind, value and workspace are all text: another plugin's event,
    a damaged entry, or one naming no workspace (logged before grants held per
    workspace), grants nothing."""
    session = Session("s")
    entry = {"tool": "bash", "kind": "command", "value": "make test", "workspace": "/ws"}
    await session.emit("other/event", {"answer": "always", "remember": [entry]})
    bad = [
        {**entry, "value": None},
        {**entry, "workspace": None},
        {"tool": "bash", "kind": "command", "value": "make test"},
        ["bash", "command", "x", "/ws"],
    ]
    await session.emit(DECISION_EVENT, {"answer": "always", "remember": bad})
    assert GrantLog().current(session) == set()
    await session.emit(DECISION_EVENT, {"answer": "always", "remember": [entry]})
    assert GrantLog().current(session) == {("bash", "command", "make test", "/ws")}
    assert ("bash", "command", "make test") in GrantLog().until(session, "/ws")
    assert ("bash", "command", "make test") not in GrantLog().until(session, "/other")


class _UnloggedSession(Session):
    """A session whose log refuses every event (a full disk, a broken store)."""

    def emit(self, type: str, data: dict[str, Any], value: object = None):
        raise OSError("the log is full")


async def test_a_decision_that_cannot_be_logged_is_never_an_allow(layout):
    """docs/permissions.md, Failing closed: a call that would be allowed is denied
    when its decision cannot be logged, and the tool does not run."""
    ran: list[str] = []
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {})
    agent.session = _UnloggedSession("s")
    call = ToolCall(id="c", name="read", arguments='{"path": "src/a.py"}')
    result = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
    assert result is not None
    assert result.is_error
    assert "could not be logged (OSError: the log is full)" in result.content
    assert ran == []


class _Refusing(Session):
    """A session whose log refuses every event with ``error``."""

    error: Exception = OSError()

    def emit(self, type: str, data: dict[str, Any], value: object = None):
        raise self.error


@pytest.mark.parametrize(
    ("error", "said"),
    [(OSError(), "(OSError)"), (OSError("key sk-ant-hidden-0123456789"), "(OSError: key ***)")],
    ids=["bare", "secret"],
)
async def test_why_a_decision_could_not_be_logged_is_worded_and_redacted(
    layout, monkeypatch, error, said
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-hidden-0123456789")
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {})
    agent.session = _Refusing("s")
    agent.session.error = error
    call = ToolCall(id="c", name="read", arguments='{"path": "src/a.py"}')
    result = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
    assert result is not None and result.is_error
    assert f"could not be logged {said}" in result.content, result.content


async def test_why_a_check_failed_is_worded_and_redacted(layout, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-hidden-0123456789")

    async def failing(self, agent, call):
        raise RuntimeError("sk-ant-hidden-0123456789") if call.id == "s" else RuntimeError()

    monkeypatch.setattr(dsh_permissions.Permissions, "_check", failing)
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {})
    told = []
    for id in ("b", "s"):
        call = ToolCall(id=id, name="read", arguments='{"path": "src/a.py"}')
        result = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
        assert result is not None and result.is_error
        told.append(result.content)
    assert "check failed (RuntimeError), so" in told[0], told[0]
    assert "check failed (RuntimeError: ***), so" in told[1], told[1]


class _Waiting:
    """A front end that never answers (a person who walked away)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: Any) -> None:
        self.asked.set()
        await anyio.sleep_forever()


async def test_an_abort_while_asking_lets_the_log_store_its_decision(layout):
    """The deny logged when a turn is aborted during a question reaches a log whose
    store is asynchronous (persistence): the write is shielded from the abort."""
    stored: list[str] = []

    async def store(event_type: str) -> None:
        await anyio.lowlevel.checkpoint()
        stored.append(event_type)

    waiting = _Waiting()
    pm = create_plugin_manager(
        [("permissions", dsh_permissions), ("front", waiting)], load_entry_points=False
    )
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {})
    agent.session = Session("s", observer=lambda session, event: store(event.type))
    call = ToolCall(id="c", name="deploy", arguments="{}")
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pm.relay.tools_execute, agent, call, 1, 1)
            await waiting.asked.wait()
            scope.cancel()
    assert stored == [DECISION_EVENT]
    (event,) = agent.session.events
    assert event.data["decision"] == "deny"


def test_plugin_wide_settings_are_kept_under_a_dsh_yml_section(layout):
    """Settings given to ``Permissions(...)`` and the ``permissions:`` section both
    apply: a plugin-wide deny is not dropped because the section exists."""
    from types import SimpleNamespace

    from dsh_permissions import Permissions
    from dsh_permissions._settings import PermissionsSection

    agent = FakeAgent(layout.ws, make_tools([]), None, {})
    agent.harness = SimpleNamespace(
        settings={"permissions": PermissionsSection},
        config=SimpleNamespace(section=lambda n: PermissionsSection(allow=("read",))),
    )
    settings = Permissions({"deny": ["bash(rm *)"]}).settings_for(agent)
    assert settings.deny == ("bash(rm *)",)
    assert settings.allow == ("read",)


async def test_bypass_is_warned_about_once_per_agent(layout, caplog):
    """docs/permissions.md, Modes: bypass logs a warning once per agent, not at
    every call."""
    plugin = dsh_permissions.Permissions()
    agent = FakeAgent(layout.ws, make_tools([]), None, {"permissions": {"mode": "bypass"}})
    call = ToolCall(id="c", name="fetch", arguments='{"url": "x"}')
    with caplog.at_level("WARNING", logger="dsh_permissions"):
        for _ in range(3):
            assert await plugin.tools_execute(agent, call, 1, 1) is None
    warnings = [r for r in caplog.records if "permissions mode bypass" in r.getMessage()]
    assert len(warnings) == 1


async def test_new_plugin_or_section_settings_apply_at_the_next_call(layout):
    """The settings an agent's calls are checked by are made again when the plugin's
    settings or the harness's ``permissions:`` section are replaced."""
    from types import SimpleNamespace

    from dsh_permissions._settings import PermissionsSection

    section: list[PermissionsSection] = [PermissionsSection()]
    plugin = dsh_permissions.Permissions({})
    agent = FakeAgent(layout.ws, make_tools([]), None, {})
    agent.harness = SimpleNamespace(
        settings={"permissions": PermissionsSection},
        config=SimpleNamespace(section=lambda n: section[0]),
    )
    call = ToolCall(id="c", name="fetch", arguments='{"url": "x"}')
    assert await plugin.tools_execute(agent, call, 1, 1) is None
    plugin.settings = PermissionSettings(deny=("fetch",))
    denied = await plugin.tools_execute(agent, call, 1, 1)
    assert denied is not None
    assert "deny: fetch" in denied.content
    plugin.settings = PermissionSettings()
    assert await plugin.tools_execute(agent, call, 1, 1) is None
    section[0] = PermissionsSection(deny=("fetch",))
    denied = await plugin.tools_execute(agent, call, 1, 1)
    assert denied is not None
    assert "deny: fetch" in denied.content


async def test_a_command_call_sees_a_workspace_that_moved(layout):
    """A call naming a command checks the workspace's real path again, as one naming a
    path does: commands are canonicalised against the workspace the link names now."""
    link = layout.root / "current"
    link.symlink_to(layout.ws)
    (layout.outside / ".env").write_text("x\n")
    rules = {"allow": ["bash(*)"], "deny": ["bash(cat .env)"]}
    agent = FakeAgent(link, make_tools([]), None, {"permissions": rules})
    plugin = dsh_permissions.Permissions()
    first = ToolCall(id="a", name="bash", arguments='{"command": "true"}')
    assert await plugin.tools_execute(agent, first, 1, 1) is None
    link.unlink()
    link.symlink_to(layout.outside)
    call = ToolCall(id="b", name="bash", arguments='{"command": "cat ../outside/.env"}')
    denied = await plugin.tools_execute(agent, call, 1, 2)
    assert denied is not None
    assert "deny: bash(cat .env)" in denied.content


async def test_an_agent_without_a_workspace_is_checked_in_the_current_directory(
    layout, monkeypatch
):
    """With no ``agent.workspace``, relative paths are the current directory's, as for
    the tools: ``.env`` is the ``.env`` there."""
    monkeypatch.chdir(layout.ws)
    rules = {"deny": [f"read({layout.ws}/.env)"]}
    agent = FakeAgent(layout.ws, make_tools([]), None, {"permissions": rules})
    agent.workspace = None
    call = ToolCall(id="c", name="read", arguments='{"path": ".env"}')
    denied = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
    assert denied is not None
    assert f"deny: read({layout.ws}/.env)" in denied.content


@pytest.mark.parametrize(
    ("name", "said"),
    [("read", "not valid JSON"), ("write", "you are in plan mode")],
)
async def test_unreadable_arguments_in_plan_mode(judge, name, said):
    """In plan mode a read-only call whose arguments cannot be read is denied as such
    (never passed on); a mutating one is denied because of the mode."""
    judged = await judge({}, name, "{not json", mode="plan")
    assert judged.decision == "deny"
    assert said in judged.event["reason"]


async def test_always_remembers_only_what_was_asked_about(layout):
    """ "Always" remembers the subjects asked about, not the parts that were allowed
    anyway: a copy from inside the workspace to outside it in accept-edits remembers
    the target only (docs/permissions.md, Approvals)."""
    from permissions_util import Asker

    asker = Asker(PermissionAnswer.always())
    pm = create_plugin_manager(
        [("permissions", dsh_permissions), ("asker", asker)], load_entry_points=False
    )
    options = {"permissions": {"mode": "accept-edits"}}
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, options)
    arguments = f'{{"source": "src/a.py", "target": "{layout.outside}/a.py"}}'
    await pm.relay.tools_execute(agent, ToolCall(id="c", name="copy", arguments=arguments), 1, 1)
    (request,) = asker.requests
    assert request.remember == (("path", f"{layout.outside}/a.py"),)


async def test_an_answer_altered_after_it_was_built_is_a_deny(layout):
    """Only "once" and "always" allow: an answer whose choice was changed after it
    was built (it is frozen, but Python lets a front end force it) denies the call."""
    from permissions_util import Asker

    forged = PermissionAnswer.once()
    object.__setattr__(forged, "choice", "yes")
    asker = Asker(forged)
    ran: list[str] = []
    pm = create_plugin_manager(
        [("permissions", dsh_permissions), ("asker", asker)], load_entry_points=False
    )
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {})
    result = await pm.relay.tools_execute(
        agent, ToolCall(id="c", name="deploy", arguments="{}"), 1, 1
    )
    assert asker.requests
    assert ran == []
    assert result is not None
    assert result.is_error
    assert "refused" in result.content


async def test_a_rule_denial_in_plan_mode_still_says_what_to_do(judge):
    """Only the plan mode's own denial goes without advice (its reason says what to
    do); a deny rule in plan mode tells the model not to get around it (B47)."""
    judged = await judge({"deny": ["read(.env)"]}, "read", {"path": ".env"}, mode="plan")
    assert judged.decision == "deny"
    assert judged.result is not None
    assert "Do not try to get around the rule" in judged.result.content


async def test_an_unanswered_ask_rule_advises_asking_the_user(layout):
    """A call an ``ask`` rule covers, denied because nobody could answer, is not
    described as a rule to get around: the model is told to ask the user."""
    agent = FakeAgent(layout.ws, make_tools([]), None, {"permissions": {"ask": ["deploy"]}})
    call = ToolCall(id="c", name="deploy", arguments="{}")
    denied = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
    assert denied is not None
    assert "ask the user to allow it" in denied.content
    assert "get around" not in denied.content


class _SlottedAgent:
    """An agent object that cannot be weakly referenced."""

    __slots__ = ("id", "options", "relay", "session", "tools", "workspace")


async def test_an_agent_that_cannot_be_weakly_referenced_is_still_checked(layout):
    """The per-agent cache is skipped for such an agent; its calls are decided as
    usual (not denied because the cache failed)."""
    agent = _SlottedAgent()
    agent.id, agent.options, agent.relay = "a", {"permissions": {"allow": ["deploy"]}}, None
    agent.session, agent.tools, agent.workspace = Session("s"), make_tools([]), layout.ws
    call = ToolCall(id="c", name="deploy", arguments="{}")
    assert await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1) is None


async def test_long_values_are_clipped_in_the_decision_event(judge):
    """Each part's value in the ``permission/decision`` event is at most 500
    characters and an ellipsis, however long the command."""
    judged = await judge({"allow": ["bash(*)"]}, "bash", {"command": "echo " + "a" * 2000})
    (part,) = judged.event["parts"]
    assert part["value"] == ("echo " + "a" * 2000)[:500] + "…"


def test_an_agent_adds_allow_rules_and_replaces_the_timeout_it_sets():
    """docs/permissions.md, Where settings come from: an agent's rules are added to
    the plugin-wide ones (allow rules too), and the timeout it sets replaces the
    plugin-wide one; the default timeout is 300 seconds."""
    assert PermissionSettings().ask_timeout == 300
    wide = PermissionSettings(allow=("read",), ask_timeout=60)
    merged = wide.merged(PermissionSettings(allow=("grep",), ask_timeout=5))
    assert merged.allow == ("read", "grep")
    assert merged.ask_timeout == 5
    assert wide.merged(PermissionSettings(allow=("grep",))).ask_timeout == 60


async def test_settings_given_as_an_object_in_the_options_are_enforced(layout):
    """``options["permissions"]`` may hold a ``PermissionSettings`` object (from
    code); its rules apply, and settings objects are frozen, so the settings a policy
    was made from cannot change under it."""
    from pydantic import ValidationError

    settings = PermissionSettings(deny=("deploy",))
    with pytest.raises(ValidationError, match="frozen"):
        settings.mode = "bypass"  # type: ignore[misc]
    agent = FakeAgent(layout.ws, make_tools([]), None, {"permissions": settings})
    call = ToolCall(id="c", name="deploy", arguments="{}")
    denied = await dsh_permissions.Permissions().tools_execute(agent, call, 1, 1)
    assert denied is not None
    assert "deny: deploy" in denied.content
