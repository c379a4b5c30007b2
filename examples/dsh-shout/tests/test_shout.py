"""dsh-shout's tests, written with the fixtures of ``dsh.testing`` (see conftest.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import dsh_shout
import pytest

from dsh import (
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    create_plugin_manager,
    hookimpl,
    list_plugins,
)

CALL = ToolCall(id="call-1", name="echo", arguments='{"text": "keep me quiet"}')
MESSAGE = AssistantMessage(
    content=(
        ReasoningBlock(text="a greeting is in order"),
        TextBlock(text="Hello, world! "),
        CALL,
        TextBlock(text="Done."),
    ),
    stop_reason="tool_calls",
)


def agent(**options: Any) -> SimpleNamespace:
    """The hook only reads ``agent.options``, so a namespace stands in for an agent."""
    return SimpleNamespace(options=options)


async def test_shouts_the_text_blocks(dsh_pm, dsh_register):
    dsh_register(dsh_shout, "shout")

    result = await dsh_pm.relay.agent_step_result(
        agent=agent(shout=True), message=MESSAGE, turn=1, step=1
    )

    assert result.content == (
        ReasoningBlock(text="a greeting is in order"),
        TextBlock(text="HELLO, WORLD! "),
        CALL,
        TextBlock(text="DONE."),
    )
    assert result.text == "HELLO, WORLD! DONE."
    assert result.stop_reason == "tool_calls"
    assert MESSAGE.text == "Hello, world! Done.", "the original message must not change"


@pytest.mark.parametrize("options", [{}, {"shout": False}, {"shout": "no"}, {"other": True}])
async def test_keeps_the_message_unless_the_agent_says_shout(dsh_pm, dsh_register, options):
    dsh_register(dsh_shout, "shout")

    result = await dsh_pm.relay.agent_step_result(
        agent=agent(**options), message=MESSAGE, turn=1, step=1
    )

    assert result == MESSAGE
    assert result.text == "Hello, world! Done."


async def test_later_plugins_and_the_log_see_the_shouted_message(
    dsh_pm, dsh_register, dsh_hook_recorder
):
    class Downstream:
        """Runs after dsh-shout (trylast), as anything that reads the final message."""

        def __init__(self) -> None:
            self.seen: list[str] = []

        @hookimpl(trylast=True)
        def agent_step_result(self, message: AssistantMessage) -> None:
            self.seen.append(message.text)

    downstream = Downstream()
    dsh_register(downstream, "downstream")
    dsh_register(dsh_shout, "shout")

    result = await dsh_pm.relay.agent_step_result(
        agent=agent(shout=True), message=MESSAGE, turn=3, step=2
    )

    # The recorder runs first, so it saw the message as the model produced it.
    (call,) = dsh_hook_recorder.get("agent_step_result")
    assert call.kwargs["message"] == MESSAGE
    assert (call.kwargs["turn"], call.kwargs["step"]) == (3, 2)
    assert downstream.seen == ["HELLO, WORLD! DONE."]
    assert result.text == "HELLO, WORLD! DONE."


def test_installs_as_the_dsh_plugin_named_shout():
    # Autoload off and `-p shout`: only this plugin is loaded, whatever else is installed.
    pm = create_plugin_manager(select=["shout"], env={"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"})

    info = {plugin.name: plugin for plugin in list_plugins(pm)}["shout"]

    assert info.distribution == "dsh-shout"
    assert info.hooks == ("agent_step_result",)
    assert pm.get_plugin("shout") is dsh_shout
