"""How a long message reaches the summariser (docs/compaction.md, step 4), after the
review of 1155272 (the user's and the agent's text whole, split across chunks):

- whole up to ``TEXT_CHARS``, beyond it clipped to its head and tail: a 200,000-character
  prompt (a log piped in) cost 14 calls of an 8k summariser, over the timeout each turn;
- a piece ends after a newline or a space in its last quarter, not inside a word (a path
  ``invoice_tota|ls.py``), a combining mark or a joined emoji;
- a piece after the first names its speaker (``[user, continued]``), not
  ``[... continued]`` alone;
- a piece denser than the average is shrunk by as much as it is over, not halved
  (halving cost ~30% more calls);
- ``_checked`` takes an exact int >= 0 without calling ``count_of``.
"""

from __future__ import annotations

import pytest
from compaction_util import StatingSummariser, compacted_by_hand

from dsh import AssistantMessage, ReasoningBlock, TextBlock, UserMessage
from dsh_compaction import TextTokenCounter, _tokens
from dsh_compaction._transcript import TEXT_CHARS, Pieces, continued, transcript

pytestmark = pytest.mark.plugins("compaction")


def pieces_of(entry: str, budget: int, counter: TextTokenCounter | None = None) -> list[str]:
    pieces = Pieces([entry], counter or TextTokenCounter(len), budget)
    taken = []
    while pieces:
        taken.append(pieces.take(budget)[0][0])
    return taken


def rejoined(entry: str, taken: list[str]) -> str:
    again = continued(entry)
    assert all(p.startswith(again) for p in taken[1:]), taken
    return taken[0] + "".join(p.removeprefix(again) for p in taken[1:])


async def test_a_200000_character_prompt_costs_a_bounded_number_of_calls() -> None:
    prompt = " ".join(f"req{i} the table keeps its audit column" for i in range(5000))
    summariser = StatingSummariser(8192)

    result, _ = await compacted_by_hand(summariser.model, prompt, "ok then", "go")

    assert result.outcome == "summarized", result
    assert len(prompt) > 200_000
    assert len(summariser.requests) <= 4, len(summariser.requests)  # it was 14
    sent = "".join(r.messages[0].content for r in summariser.requests)
    assert "req0 " in sent and "req4999 " in sent  # its head and its tail
    assert "characters left out" in sent


def test_text_is_whole_up_to_the_cap_and_clipped_beyond_it() -> None:
    within = "w" * TEXT_CHARS
    beyond = "b" * (TEXT_CHARS + 1)
    said = AssistantMessage(content=(TextBlock(text=beyond),))

    entries = transcript([UserMessage(content=within), UserMessage(content=beyond), said])

    assert entries[0] == f"[user]\n{within}"
    for entry in entries[1:]:
        assert "characters left out" in entry and len(entry) < TEXT_CHARS + 100


def test_pieces_end_after_a_newline_else_a_space() -> None:
    lines = [f"- keep src/billing/module_{i:04d}/invoice_totals.py unchanged" for i in range(300)]
    entry = "[user]\n" + "\n".join(lines)
    taken = pieces_of(entry, 1000)
    assert len(taken) > 5
    assert all(p.endswith("\n") for p in taken[:-1]), [p[-20:] for p in taken]
    assert rejoined(entry, taken) == entry

    entry = "[user]\n" + " ".join(f"src/billing/invoice_totals_{i}.py" for i in range(300))
    taken = pieces_of(entry, 1000)
    assert all(p.endswith(" ") for p in taken[:-1]), [p[-20:] for p in taken]
    assert rejoined(entry, taken) == entry


@pytest.mark.parametrize("grapheme", ["e\u0301", "\U0001f469\u200d\U0001f4bb"])
def test_a_hard_cut_does_not_part_a_grapheme(grapheme: str) -> None:
    entry = "[user]\n" + grapheme * 2000  # no whitespace to cut at
    taken = pieces_of(entry, 302)
    again = continued(entry)
    for piece in taken[1:]:
        first = piece.removeprefix(again)[0]
        assert first == grapheme[0], repr(piece[:30])
    assert rejoined(entry, taken) == entry


def test_a_continued_piece_names_its_speaker() -> None:
    text = "word " * 2000
    thought = AssistantMessage(content=(ReasoningBlock(text="hm"), TextBlock(text=text)))
    user, agent = transcript([UserMessage(content=text), thought])

    assert pieces_of(user, 1000)[1].startswith("[user, continued]\n")
    assert pieces_of(agent, 1000)[1].startswith("[assistant, continued]\n")
    # a piece split again (a smaller room) keeps one mark
    assert continued("[user, continued]\nword") == "[user, continued]\n"


def test_a_denser_piece_is_shrunk_by_as_much_as_it_is_over_not_halved() -> None:
    counter = TextTokenCounter(lambda s: len(s) + s.count("#"))  # '#' costs two
    entry = "[user]\n" + ("ab " * 300 + "# " * 150 + "#" * 150 + " ") * 10
    taken = pieces_of(entry, 500, counter)
    sizes = [counter.count_text(p) for p in taken]
    assert max(sizes) <= 500
    # halved: 48 pieces, some of 216 tokens; shrunk: 40, none under 300 but the last
    assert len(taken) <= 1.25 * counter.count_text(entry) / 500, sizes
    assert min(sizes[:-1]) >= 300, sizes
    assert rejoined(entry, taken) == entry


def test_an_exact_count_is_taken_without_a_call_to_count_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []
    count_of = _tokens.count_of

    def counting(tokens: object) -> int:
        calls.append(tokens)
        return count_of(tokens)

    monkeypatch.setattr(_tokens, "count_of", counting)
    assert TextTokenCounter(len).count_text("abc") == 3
    assert calls == []
    with pytest.raises(TypeError, match="returned True"):
        TextTokenCounter(lambda s: True).count_text("abc")
    assert calls == [True]
