"""A provider's own block (an Anthropic server tool's ``server_tool_use``, whose input
the model wrote; a ``web_search_tool_result``) has the known secrets hidden from its
strings (dsh.llm._redact_answer.AnswerRedactor, through dsh.llm._redact_json): a model
may put a key into a search query, and the block is logged whole (``assistant/chunk``,
``assistant/message``). A block with no secret in it passes as it came."""

from __future__ import annotations

import json
from typing import Any

import anyio
from test_redact_plugin_models import KEY, PluginModel, Serves

from dsh.llm import Finish, ProviderBlockChunk, TextDelta
from dsh.llm._redact_answer import AnswerRedactor
from dsh.testing import run_turn, scripted_harness


def block(query: str) -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": "srvtoolu_01",
        "name": "web_search",
        "input": {"query": query, "also": [query, 3, None, {"q": query}]},
    }


def test_a_key_in_a_provider_block_is_hidden() -> None:
    hide = AnswerRedactor((KEY,))
    out = hide.take(ProviderBlockChunk("anthropic", block(f"who has {KEY[:20]}?")))
    assert out == [ProviderBlockChunk("anthropic", block("who has ***?"))]


def test_a_block_without_a_key_passes_as_it_came() -> None:
    chunk = ProviderBlockChunk("anthropic", block("weather in Paris"))
    assert AnswerRedactor((KEY,)).take(chunk)[0] is chunk


async def test_a_plugin_models_provider_block_is_logged_with_the_key_hidden() -> None:
    said = [ProviderBlockChunk("anthropic", block(KEY)), TextDelta("ok"), Finish("stop")]
    async with scripted_harness(plugins=[Serves(PluginModel(said))], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "own"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    logged = json.dumps([e.data for e in events if e.type.startswith("assistant/")])
    assert KEY not in logged and '"query": "***"' in logged
