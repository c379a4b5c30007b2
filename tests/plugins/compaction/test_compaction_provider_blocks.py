"""A provider's own blocks (``ProviderBlock``: an Anthropic server tool's call and
results) in compaction: counted as their JSON text, shown in the summary's transcript
by provider, kind and clipped JSON."""

from __future__ import annotations

import json

import pytest

from dsh import AssistantMessage, ProviderBlock, TextBlock, UserMessage
from dsh_compaction import HeuristicCounter, TextTokenCounter
from dsh_compaction._transcript import CLIP_CHARS, transcript

pytestmark = pytest.mark.plugins("compaction")

USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "dsh"}}
FOUND = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [{"type": "web_search_result", "url": "https://example.com/dsh", "title": "dsh"}],
}
MESSAGE = AssistantMessage(
    content=(
        ProviderBlock(provider="anthropic", data=USE),
        ProviderBlock(provider="anthropic", data=FOUND),
        TextBlock(text="ok"),
    )
)


def compact(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))


def test_a_provider_block_counts_its_json_text() -> None:
    """It counted as nothing, so a history of search results never reached the
    threshold however large they were."""
    counter = TextTokenCounter(len, message_overhead=0, call_overhead=0)
    assert counter.count_message(MESSAGE) == len(compact(USE)) + len(compact(FOUND)) + len("ok")
    overhead = TextTokenCounter(len, message_overhead=0, call_overhead=8)
    assert overhead.count_message(MESSAGE) == counter.count_message(MESSAGE) + 16
    big = {"type": "web_search_tool_result", "content": "é" * 4000}
    heavy = AssistantMessage(content=(ProviderBlock(provider="anthropic", data=big),))
    assert HeuristicCounter().count_message(heavy) >= 2000  # UTF-8 bytes, as for text


def test_a_provider_block_is_in_the_transcript_by_kind_with_its_json_clipped() -> None:
    """It was left out, so the summary lost what the search found."""
    (_, entry) = transcript([UserMessage(content="look it up"), MESSAGE])
    assert f"[assistant, anthropic server_tool_use]\n{compact(USE)}" in entry
    assert f"[assistant, anthropic web_search_tool_result]\n{compact(FOUND)}" in entry
    assert entry.endswith("[assistant]\nok")
    long = {"type": "web_search_tool_result", "content": "x" * (CLIP_CHARS * 2)}
    (clipped,) = transcript([AssistantMessage(content=(ProviderBlock(provider="p", data=long),))])
    assert "characters left out" in clipped
    assert len(clipped) < CLIP_CHARS
