"""A provider's own blocks (``ProviderBlock``: an Anthropic server tool's call and
results) are stored and resumed exactly by every backend, so a resumed session sends
them back; ``dsh sessions show`` names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import AssistantMessage, ProviderBlock, TextBlock
from dsh.llm import Finish, ProviderBlockChunk, TextDelta, UsageChunk
from dsh.messages import Usage
from dsh.session import SessionEvent
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings
from dsh_persistence._transcript import transcript

pytestmark = pytest.mark.plugins("persistence")

USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "dsh", "n": 2.5, "deep": [True, None, 10**30]},
}
FOUND = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {"type": "web_search_result", "title": "d\u00e9j\u00e0", "encrypted_content": "E=="}
    ],
}
SEARCHED = Reply(
    chunks=(
        ProviderBlockChunk("anthropic", USE),
        ProviderBlockChunk("anthropic", FOUND),
        TextDelta("Found it."),
        UsageChunk(Usage(input_tokens=10, output_tokens=3)),
        Finish("stop"),
    )
)


@pytest.fixture(params=["jsonl", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> PersistenceSettings:
    if request.param == "postgresql":
        return PersistenceSettings(backend="postgresql", url=request.getfixturevalue("pg_url"))
    return PersistenceSettings(backend=request.param, directory=tmp_path / "sessions")


async def test_provider_blocks_are_stored_resumed_and_sent_again(
    store: PersistenceSettings,
) -> None:
    plugin = PersistencePlugin(store)
    try:
        async with scripted_harness(
            ScriptedModel([SEARCHED]), plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(10):
                await run_turn(agent, "look it up")
            history = list(agent.session.history)
    finally:
        plugin.close()
    answer = history[1]
    assert isinstance(answer, AssistantMessage)
    assert answer.content == (
        ProviderBlock(provider="anthropic", data=USE),
        ProviderBlock(provider="anthropic", data=FOUND),
        TextBlock(text="Found it."),
    )

    model = ScriptedModel([text("ok")])
    plugin = PersistencePlugin(store)
    try:
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            resumed = await h.agents.resume("a", agent.session.id, options={"model": "scripted"})
            assert list(resumed.session.history) == history
            with anyio.fail_after(10):
                await run_turn(resumed, "and then?")
            shown = transcript(resumed.session.events)
    finally:
        plugin.close()
    assert model.requests[0].messages[1] == answer
    assert '  (anthropic server_tool_use: {"type":"server_tool_use","id":"srvtoolu_1",' in shown
    assert "  (anthropic web_search_tool_result: " in shown
    assert shown.index("server_tool_use") < shown.index("assistant: Found it.")


def test_show_names_a_provider_block_and_cuts_it() -> None:
    """It was not shown at all: the transcript read as if the model had searched nothing."""
    block: dict[str, Any] = {
        "type": "provider",
        "provider": "anthropic",
        "data": {"type": "web_search_tool_result", "content": "x" * 500},
    }
    message = {"content": [block, {"type": "text", "text": "ok"}]}
    text_ = transcript([SessionEvent("assistant/message", 0, 0.0, {"message": message})])
    first = text_.splitlines()[0]
    assert first.startswith('  (anthropic web_search_tool_result: {"type":"web_search_tool_result"')
    assert first.endswith("...)")
    assert len(first) < 160
    assert text_.endswith("assistant: ok\n")
