"""What the user and the agent wrote reaches the summariser whole: a long user message
(or assistant text) is split across chunks, not clipped, so a requirement in its middle
is summarised (docs/compaction.md, step 4). Tool data (results, call arguments),
thinking and a provider's blocks are still clipped to their head and tail.

Before: every entry was clipped to its first 4,000 and last 2,000 characters, even when
the summariser's window could hold it: the middle of a long prompt never reached the
summariser, and the summary replaced it.
"""

from __future__ import annotations

import pytest
from compaction_util import StatingSummariser, compacted_by_hand

from dsh import AssistantMessage, TextBlock, ToolResultMessage, UserMessage
from dsh_compaction import HeuristicCounter, TextTokenCounter
from dsh_compaction._transcript import Pieces, continued, transcript

pytestmark = pytest.mark.plugins("compaction")

REQUIREMENT = "REQUIREMENT: every table keeps its audit column"


def long_text(filler: str = "lorem ipsum ", times: int = 1000) -> str:
    return filler * times + REQUIREMENT + " " + filler * times  # ~24,000 characters


def test_user_and_assistant_text_is_not_clipped_but_tool_data_is() -> None:
    text = long_text()
    said = AssistantMessage(content=(TextBlock(text=text),))
    result = ToolResultMessage(call_id="c", name="read", content=text)

    entries = transcript([UserMessage(content=text), said, result])

    assert entries[0] == f"[user]\n{text}"
    assert entries[1] == f"[assistant]\n{text}"
    assert REQUIREMENT not in entries[2] and "characters left out" in entries[2]


async def test_a_requirement_in_the_middle_of_a_long_prompt_reaches_the_summariser() -> None:
    summariser = StatingSummariser(4096)
    result, _ = await compacted_by_hand(summariser.model, long_text(), "ok then", "go on")

    assert result.outcome == "summarized", result
    sent = [r.messages[0].content for r in summariser.requests]
    assert len(sent) > 2  # split across chunks
    assert any(REQUIREMENT in content for content in sent)
    assert max(summariser.needed) <= 4096  # every request fits the window


@pytest.mark.timeout(60)
def test_a_very_long_message_is_split_in_linear_time() -> None:
    """A prompt of 8 MB in pieces of 500 tokens (~4,000 of them): each piece is cut
    from the text once and counted once or a few times, never the rest of the text."""
    counter = HeuristicCounter()
    counted: list[int] = []  # the size of each text counted

    def count(text: str) -> int:
        counted.append(len(text))
        return counter.count_text(text)

    text = "[user]\n" + long_text("word " * 10, 80_000)
    pieces = Pieces([text], TextTokenCounter(count), 500)
    taken = []
    while pieces:
        taken.append(pieces.take(500)[0][0])
    assert len(taken) > 3_000
    assert sum(counted) < 4 * len(text)  # each character counted a few times, not n
    again = continued(text)
    assert "".join(p.removeprefix(again) for p in taken) == text
