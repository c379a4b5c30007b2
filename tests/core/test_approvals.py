"""``dsh.approvals`` and the ``tools_approval`` hook: a front end answers a question any
plugin asks, through the relay, and an answer of another type is that front end's
failure, named."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import HookError, ToolCall, hookimpl
from dsh._cli_approvals import TerminalApprovals
from dsh.approvals import ApprovalAnswer, ApprovalRequest
from dsh.plugins import PluginManager

CALL = ToolCall(id="c1", name="bash", arguments='{"command": "make"}')
REQUEST = ApprovalRequest("bash", CALL.arguments, "no rule allows it")


class FrontEnd:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[tuple[Any, ToolCall, ApprovalRequest]] = []

    @hookimpl
    async def tools_approval(self, agent: Any, call: ToolCall, request: ApprovalRequest) -> Any:
        self.asked.append((agent, call, request))
        return self.answer


def test_an_answer_is_one_of_three_choices_with_a_text_message() -> None:
    assert ApprovalAnswer.once() == ApprovalAnswer("once", "")
    assert ApprovalAnswer.always().choice == "always"
    assert ApprovalAnswer.deny("not now") == ApprovalAnswer("deny", "not now")
    with pytest.raises(ValueError, match="ApprovalAnswer choice must be one of once, always, deny"):
        ApprovalAnswer("no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ApprovalAnswer message must be a str, not 3"):
        ApprovalAnswer.deny(3)  # type: ignore[arg-type]


async def test_the_relay_gives_the_first_answer_and_who_gave_it(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    assert not dsh_pm.relay.implemented("tools_approval")
    assert await dsh_pm.relay.tools_approval(None, CALL, REQUEST) is None  # type: ignore[arg-type]
    passing, answering = FrontEnd(None), FrontEnd(ApprovalAnswer.once())
    dsh_register(answering, "ui")
    dsh_register(passing, "other")  # registered later: asked first
    answered = await dsh_pm.relay.tools_approval("agent", CALL, REQUEST)  # type: ignore[arg-type]
    assert answered == ("ui", ApprovalAnswer.once())
    assert passing.asked == answering.asked == [("agent", CALL, REQUEST)]


async def test_an_answer_of_another_type_is_the_front_ends_failure(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    dsh_register(FrontEnd("yes"), "ui")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.tools_approval(None, CALL, REQUEST)  # type: ignore[arg-type]
    assert (info.value.plugin, info.value.hook) == ("ui", "tools_approval")
    assert "returned str where ApprovalAnswer is expected" in str(info.value.cause)


def test_the_terminal_is_a_front_end_of_the_core_hook_with_no_plugin_loaded(
    dsh_pm: PluginManager,
) -> None:
    """Registered where dsh-permissions is not: its impl is of a core hook, not optional."""
    dsh_pm.register(TerminalApprovals(), "terminal")
    (impl,) = dsh_pm.hook.tools_approval.get_hookimpls()
    assert impl.plugin_name == "terminal" and not impl.opts.get("optionalhook")
