"""A front end that implements only the core's ``tools_approval`` (``dsh.approvals``), as
``dsh chat``'s terminal now does, answers dsh-permissions' questions: the plugin asks
its own ``permission_ask`` impls first, then the core's front ends, and fails closed
across both (no answer, a failure, a wrong answer, the timeout: a deny)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from permissions_util import Asker, CorpusTools, FakeAgent, make_tools

import dsh_permissions
from dsh import ToolCall, create_plugin_manager, hookimpl
from dsh.approvals import ApprovalAnswer, ApprovalRequest
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")


class FrontEnd:
    """A core front end: records each request and gives ``answer`` (or raises ``error``,
    or waits for ever)."""

    def __init__(self, answer: Any = None, error: Exception | None = None, hang: bool = False):
        self.answer = answer
        self.error = error
        self.hang = hang
        self.requests: list[ApprovalRequest] = []

    @hookimpl
    async def tools_approval(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        if self.hang:
            await anyio.sleep_forever()
        if self.error is not None:
            raise self.error
        return self.answer


async def run(*front_ends: tuple[str, object], **permissions: Any) -> tuple[dict[str, Any], str]:
    """One ``bash make test`` call that no rule allows (asked about, "always" would
    remember the command): its decision and what the model read."""
    model = ScriptedModel([calls(("bash#b", {"command": "make test"})), text("ok")])
    tools = CorpusTools()
    plugins = [("permissions", dsh_permissions), ("tools", tools), *front_ends]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        options = {"model": "scripted", "permissions": permissions}
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    assert check_invariants(events) == []
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    assert (tools.ran == ["bash make test"]) == (decision["decision"] == "allow")
    seen = model.requests[1].messages[-1].content
    return decision, seen if isinstance(seen, str) else str(seen)


async def test_a_core_front_end_is_asked_with_the_question_and_allows_once():
    ui = FrontEnd(ApprovalAnswer.once())
    decision, _ = await run(("ui", ui), ask_timeout=30)
    (request,) = ui.requests
    assert type(request) is ApprovalRequest
    assert (request.tool, request.arguments) == ("bash", '{"command": "make test"}')
    assert "no rule allows" in request.reason
    assert (request.remember, request.timeout) == ((("command", "make test"),), 30)
    assert decision["decision"] == "allow" and decision["answer"] == "once"
    assert decision["front_end"] == "ui"
    assert decision["reason"] == "the user allowed it once through the front end 'ui'"
    assert decision["remember"] == []


async def test_a_core_front_ends_always_is_remembered():
    decision, _ = await run(("ui", FrontEnd(ApprovalAnswer.always())))
    assert decision["decision"] == "allow" and decision["answer"] == "always"
    assert [(r["kind"], r["value"]) for r in decision["remember"]] == [("command", "make test")]


async def test_a_core_front_ends_deny_tells_the_model_its_reason():
    decision, seen = await run(("ui", FrontEnd(ApprovalAnswer.deny("use make check"))))
    assert decision["decision"] == "deny" and decision["answer"] == "deny"
    said = "the user refused it (asked through the front end 'ui'): use make check"
    assert decision["reason"] == said and said in seen


async def test_a_core_front_end_saying_no_one_answered_is_not_a_refusal():
    decision, _ = await run(("ui", FrontEnd(ApprovalAnswer.deny("no answer: the input ended"))))
    assert (
        decision["reason"] == "no one answered (asked through the front end 'ui'): the input ended"
    )


async def test_a_permission_ask_answer_wins_and_the_core_front_end_is_not_asked():
    own, ui = Asker(PermissionAnswer.deny("not today")), FrontEnd(ApprovalAnswer.once())
    decision, _ = await run(("ui", ui), ("own", own))
    assert len(own.requests) == 1 and ui.requests == []
    assert decision["decision"] == "deny" and decision["front_end"] == "own"


async def test_a_permission_ask_passing_leaves_the_question_to_the_core_front_end():
    own, ui = Asker(None), FrontEnd(ApprovalAnswer.once())
    decision, _ = await run(("ui", ui), ("own", own))
    assert len(own.requests) == 1 and len(ui.requests) == 1
    assert decision["decision"] == "allow" and decision["front_end"] == "ui"


async def test_a_permission_ask_failing_denies_without_asking_the_core_front_end():
    own, ui = Asker(error=RuntimeError("gone")), FrontEnd(ApprovalAnswer.once())
    decision, _ = await run(("ui", ui), ("own", own))
    assert ui.requests == []
    assert decision["decision"] == "deny" and decision["front_end"] == "own"
    assert "the front end 'own' failed: RuntimeError: gone" in decision["reason"]


@pytest.mark.parametrize(
    ("ui", "said"),
    [
        (
            FrontEnd(error=RuntimeError("tty gone")),
            "the front end 'ui' failed: RuntimeError: tty gone",
        ),
        (
            FrontEnd("yes"),
            "the front end 'ui' failed: TypeError: returned str where ApprovalAnswer",
        ),
        (FrontEnd(None), "no front end answered (none could ask a person)"),
    ],
    ids=["raising", "wrong-type", "passing"],
)
async def test_a_core_front_end_that_cannot_answer_denies_naming_it(ui, said):
    decision, seen = await run(("ui", ui))
    assert len(ui.requests) == 1
    assert decision["decision"] == "deny" and decision["answer"] is None
    assert said in decision["reason"] and said in seen
    assert decision["front_end"] == ("ui" if "'ui'" in said else None)


async def test_outside_a_harness_the_plugin_refuses_a_core_answer_of_another_type(layout):
    """A relay with no return types installed (a plugin manager of its own, as the
    corpus's ``judge`` uses) passes a wrong answer on: the plugin refuses it itself."""
    plugins = [("permissions", dsh_permissions), ("ui", FrontEnd("yes"))]
    pm = create_plugin_manager(plugins, load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {"permissions": {}})
    call = ToolCall(id="c1", name="bash", arguments='{"command": "make test"}')
    result = await pm.relay.tools_execute(agent, call, 1, 1)
    assert result is not None and result.is_error
    assert "the front end 'ui' answered str, not an ApprovalAnswer" in result.content


async def test_with_no_front_end_of_either_hook_the_call_is_denied_as_before():
    decision, _ = await run()
    assert decision["decision"] == "deny" and decision["front_end"] is None
    assert "no front end that can ask a person is loaded" in decision["reason"]


async def test_the_ask_timeout_bounds_a_core_front_end():
    ui = FrontEnd(hang=True)
    decision, seen = await run(("ui", ui), ask_timeout=0.05)
    assert len(ui.requests) == 1
    assert "no answer came within 0.05 seconds" in decision["reason"]
    assert "no answer came within 0.05 seconds" in seen


class SlowAsker(Asker):
    """A ``permission_ask`` front end that takes its time (``took``: seconds on the
    event loop's clock, the one the plugin counts with) and passes."""

    took = 0.0

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: Any) -> Any:
        self.requests.append(request)
        start = anyio.current_time()
        await anyio.sleep(0.4)
        self.took = anyio.current_time() - start


async def test_a_core_front_end_is_told_the_time_permission_ask_left():
    """``request.timeout`` is what is left of ``ask_timeout`` once the
    ``permission_ask`` impls passed (it was the whole of it: a front end counting it
    down under the question said more time than it had)."""
    own, ui = SlowAsker(None), FrontEnd(ApprovalAnswer.once())
    decision, _ = await run(("ui", ui), ("own", own), ask_timeout=30)
    assert len(own.requests) == 1 and own.requests[0].timeout == 30
    (asked,) = ui.requests
    # at most what was left once it passed, however long the loaded machine took
    assert asked.timeout is not None and 0 < asked.timeout <= 30 - own.took
    assert decision["decision"] == "allow"
    ui = FrontEnd(ApprovalAnswer.once())
    await run(("ui", ui), ask_timeout=30)
    assert ui.requests[0].timeout == 30  # no permission_ask impl: the whole of it


class Deaf(FrontEnd):
    """Answers "once" once the time is up (the plugin's deadline passed), not
    cancellable meanwhile (a worker thread running ``input()`` without
    ``abandon_on_cancel``)."""

    @hookimpl
    async def tools_approval(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        deadline = anyio.current_effective_deadline()
        assert deadline < anyio.current_time() + 30  # ask_timeout's, not none
        with anyio.CancelScope(shield=True):  # woken after the deadline's own timer
            await anyio.sleep_until(deadline + 0.01)
        return ApprovalAnswer.once()


async def test_an_answer_that_comes_after_the_ask_timeout_is_a_deny():
    """The late "y" was taken: the call ran though ``ask_timeout`` had passed."""
    decision, _ = await run(("ui", Deaf()), ask_timeout=0.05)
    assert decision["decision"] == "deny"
    assert "no answer came within 0.05 seconds" in decision["reason"]


def test_a_permission_answer_is_the_cores_answer_under_its_own_name():
    assert isinstance(PermissionAnswer.once(), ApprovalAnswer)
    assert type(PermissionAnswer.deny("no")) is PermissionAnswer
    with pytest.raises(ValueError, match=r"^PermissionAnswer choice must be one of once, always"):
        PermissionAnswer("no")  # type: ignore[arg-type]


async def test_a_core_answer_altered_after_it_was_built_is_a_deny_naming_the_front_end():
    """A forged choice failed rebuilding the plugin's answer: the call was denied as a
    failure of the permission check, naming no front end."""
    forged = ApprovalAnswer.once()
    object.__setattr__(forged, "choice", "yes")
    decision, seen = await run(("ui", FrontEnd(forged)))
    assert decision["decision"] == "deny" and decision["front_end"] == "ui"
    assert (
        "and the front end 'ui' answered badly: PermissionAnswer choice must be one of"
        in (decision["reason"])
    )
    assert "the permission check failed" not in seen
