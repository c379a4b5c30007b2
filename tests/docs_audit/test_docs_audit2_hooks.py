"""docs/hooks.md: order, the request-error hook, what a hook's `agent` offers, hooks of a
plugin's own, and plugin commands, as a plugin author relies on them."""

from __future__ import annotations

import argparse
import re
import types
from pathlib import Path
from typing import Any

import pytest
from docs_files import ROOT

from dsh import ContinuationDecision, RequestErrorDecision, hookimpl, hookspec
from dsh.plugins import PluginManager
from dsh.session import EVENT_TYPES
from dsh.testing import ScriptedModel, fail, run_turn, scripted_harness, tool_calls


@pytest.fixture(autouse=True)
def _sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "sessions"))


async def test_trylast_impls_run_earlier_registered_first_and_tryfirst_later_first(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    """hooks.md:63-67: "`tryfirst` impls run first, then plain impls, then `trylast`
    impls. Among plain impls, and among `tryfirst` impls, the one registered **later runs
    first** ... Among `trylast` impls the earlier registered runs first"."""
    order: list[str] = []

    def plugin(name: str, **opts: bool) -> object:
        impl = hookimpl(**opts)(lambda self, source: order.append(name))
        return type(name, (), {"agent_created": impl})()

    for name, opts in [("L1", {"trylast": True}), ("F1", {"tryfirst": True}), ("P1", {})]:
        dsh_register(plugin(name, **opts), name)
    for name, opts in [("L2", {"trylast": True}), ("F2", {"tryfirst": True}), ("P2", {})]:
        dsh_register(plugin(name, **opts), name)
    await dsh_pm.relay.agent_created(None, "create")  # type: ignore[arg-type]
    assert order == ["F2", "F1", "P2", "P1", "L1", "L2"]


async def test_the_request_error_hook_fires_when_no_model_is_configured() -> None:
    """hooks.md:306-308: "Fires when the model call of a step fails (the provider answered
    with an error, the stream broke, or no model is configured)"."""
    codes: list[str] = []

    class Watch:
        @hookimpl
        def agent_request_error(self, error: Any) -> None:
            codes.append(error.code)

    async with scripted_harness(plugins=[Watch()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={})
        events = await run_turn(agent, "hi")
    assert codes == ["NO_MODEL"]
    assert events[-1].data["error"]["code"] == "NO_MODEL"


async def test_max_request_retries_defaults_to_1_and_a_retry_passes_agent_request_again() -> None:
    """hooks.md:308-310: "the agent option `max_request_retries` (default 1) bounds the
    retries of one step, and once they are spent the error ends the turn without asking";
    hooks.md:323-326: "`retry` logs `step/retry` (with the attempt, the error code and your
    reason) and runs the step's request again: ... passes through `agent_request` again"."""
    asked: list[int] = []
    requests: list[int] = []

    class Retry:
        @hookimpl
        def agent_request(self, step: int) -> None:
            requests.append(step)

        @hookimpl
        def agent_request_error(self, step: int) -> RequestErrorDecision:
            asked.append(step)
            return RequestErrorDecision(action="retry", reason="try again")

    model = ScriptedModel([fail("SERVER", "down"), fail("SERVER", "still down")])
    async with scripted_harness(model, plugins=[Retry()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert asked == [1] and requests == [1, 1]
    [retry] = [e.data for e in events if e.type == "step/retry"]
    assert retry == {
        "turn": 1,
        "step": 1,
        "attempt": 1,
        "code": "SERVER",
        "message": "down",
        "reason": "try again",
    }
    assert events[-1].data["error"] == {"code": "SERVER", "message": "model 'scripted': still down"}
    model.assert_complete()


async def test_a_raising_request_error_impl_ends_the_turn_naming_the_plugin() -> None:
    """hooks.md:76: "Every failure names the plugin and the hook"; hooks.md:157-158 for
    the waterfall hooks: "A raising impl ends the turn `error`" (the "Errors" list,
    hooks.md:83-92, does not say what `agent_request_error` does; it behaves as the other
    interception hooks: the turn ends `error` and the agent keeps serving)."""

    class Boom:
        @hookimpl
        def agent_request_error(self, error: Any) -> None:
            raise KeyError("boom")

    model = ScriptedModel([fail("SERVER", "down"), "later"])
    async with scripted_harness(model, plugins=[("boom", Boom())], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        end = (await run_turn(agent, "hi"))[-1].data
        after = (await run_turn(agent, "again"))[-1].data
    assert (end["reason"], end["error"]["plugin"], end["error"]["hook"]) == (
        "error",
        "boom",
        "agent_request_error",
    )
    assert after["reason"] == "completed"


async def test_a_hooks_agent_has_what_the_page_lists(tmp_path: Path) -> None:
    """hooks.md:148-150: "`agent` — the `Agent` taking the step (`id`, `session`,
    `status`, `options`, and `harness`, `workspace`, `tools`, `models`...)"; hooks.md:168:
    "`agent.tools.get(name)` ... each tool says whether it is mutating"."""
    seen: dict[str, Any] = {}

    class Look:
        @hookimpl
        def agent_request(self, agent: Any) -> None:
            seen.update(
                id=agent.id,
                session=agent.session.id,
                status=agent.status,
                options=agent.options,
                harness=agent.harness,
                workspace=Path(agent.workspace),
                models="scripted" in agent.models,
                mutating=(agent.tools.get("write").mutating, agent.tools.get("read").mutating),
            )

    options = {"model": "scripted", "read_only": True}
    model = ScriptedModel(["ok"])
    async with scripted_harness(
        model, plugins=[Look()], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        assert seen["harness"] is h and seen["session"] == agent.session.id
    assert (seen["id"], seen["status"], seen["options"]["read_only"]) == ("a", "running", True)
    assert seen["workspace"] == Path(h.workspace) and seen["models"] is True
    assert seen["mutating"] == (True, False)


class AllowlistSpecs:
    @hookspec(firstresult=True)
    def allowlisted(self, agent: Any, call: Any, reason: str) -> bool | None:
        """Whether a tool call is on a list."""


async def test_a_plugins_own_hook_is_called_through_the_agents_relay(tmp_path: Path) -> None:
    """hooks.md:96-98: "expose it as `dsh_hookspecs` on the plugin module"; hooks.md:117-118
    "Another plugin implements it with `optionalhook=True`"; hooks.md:129-134: "It calls the
    hook through the agent's relay ...: `await agent.relay.call_first_result(
    "allowlisted", agent=agent, call=call, reason=why)`, or `call_first_named` (the
    answer and the name of the plugin that gave it) ... `agent.relay.implemented(hook)`"."""
    got: list[Any] = []
    allowlist = types.ModuleType("dsh_allowlist")
    allowlist.dsh_hookspecs = AllowlistSpecs  # type: ignore[attr-defined]

    async def tools_execute(agent: Any, call: Any) -> None:
        got.append(agent.relay.implemented("allowlisted"))
        got.append(
            await agent.relay.call_first_result("allowlisted", agent=agent, call=call, reason="why")
        )
        got.append(
            await agent.relay.call_first_named("allowlisted", agent=agent, call=call, reason="why")
        )

    allowlist.tools_execute = hookimpl(tryfirst=True)(tools_execute)  # type: ignore[attr-defined]

    class Answer:
        @hookimpl(optionalhook=True)
        def allowlisted(self, call: Any) -> bool | None:
            return call.name in {"read", "ls"} or None

    model = ScriptedModel([tool_calls(("ls", {"path": "."})), "done"])
    plugins = [("answer", Answer()), ("allowlist", allowlist)]  # the spec's owner after
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
    # the page says "the answer and the name"; the tuple is (name, answer), as the
    # docstring of HookRelay.call_first_named says: the page should give that order
    assert got == [True, True, ("answer", True)]


async def test_a_stop_decision_ends_the_turn_even_after_tool_calls(tmp_path: Path) -> None:
    """hooks.md:283-284: "`ContinuationDecision(action="stop")` ends the turn even after
    tool calls (budget guards)"."""

    class Budget:
        @hookimpl
        def agent_turn_continuation(self, decision: ContinuationDecision) -> ContinuationDecision:
            assert decision.action == "continue"  # the default after a tool call
            return ContinuationDecision(action="stop")

    model = ScriptedModel([tool_calls(("ls", {"path": "."}))])
    async with scripted_harness(
        model, plugins=[Budget()], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert [e.type for e in events][-3:] == ["tool/result", "step/end", "turn/end"]
    assert events[-1].data["reason"] == "completed" and len(model.requests) == 1


def test_a_command_takes_m_after_its_name_with_suppress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """hooks.md:828-832: "The global options (`-m`, ...) go before the command's name ...
    and the context sees them in `args` (`args.model`, ...). To take `-m` after the name
    too ... `parser.add_argument("-m", "--model", default=argparse.SUPPRESS)`"."""
    import dsh.plugins
    from dsh.cli import main
    from dsh.commands import Command

    def show(context: Any) -> None:
        print(context.args.model)

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-m", "--model", default=argparse.SUPPRESS)

    class Stats:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(Command("stats", "show -m", show, configure=configure))

    real = dsh.plugins.create_plugin_manager
    monkeypatch.setattr(
        dsh.plugins,
        "create_plugin_manager",
        lambda **kw: real([("stats", Stats())], load_entry_points=False),
    )
    outs = []
    for argv in (["-m", "fast", "stats"], ["stats", "-m", "slow"], ["stats"]):
        assert main(argv) == 0  # run returned None: status 0
        outs.append(capsys.readouterr().out)
    assert outs == ["fast\n", "slow\n", "None\n"]


def test_event_types_names_every_core_event_type_the_docs_table_lists() -> None:
    """hooks.md's table of the core's event types and ``dsh.session.EVENT_TYPES`` (the
    core's event types, public) name the same types: ``step/retry`` was missing."""
    text = (ROOT / "docs" / "hooks.md").read_text()
    table = text.split("The core's event types and their `data`", 1)[1].split("\n\n")[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {t for row in rows for t in re.findall(r"`([a-z]+/[a-z]+)`", row.split("|")[1])}
    assert len(documented) >= 10, table
    assert documented == set(EVENT_TYPES)
    assert len(EVENT_TYPES) == len(set(EVENT_TYPES))
