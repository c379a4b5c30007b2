"""A weak summariser's answers that are no summary: a copy of the transcript ("noted",
then the conversation copied until the output limit), and its own instructions said
back. Each is refused and leaves the history (and the previous summary) as it was; a
summary that quotes a path or an error line is kept."""

from __future__ import annotations

import random
from typing import Any

import pytest
from compaction_util import (
    OUTPUT,
    PREVIOUS,
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
    summary_of,
)

from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import DEFAULT_PROMPT
from dsh_compaction._answers import COPY_CHARS, copied, echoed
from dsh_compaction._summarise import AFTER

pytestmark = pytest.mark.plugins("compaction")

#: what a read's result says in the transcript
READ = f"[tool result: read]\nf3.py: {OUTPUT}"
ERROR = "Traceback (most recent call last): ValueError: invalid literal for int()"


def text(size: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghij klmnop\n") for _ in range(size))


@pytest.mark.parametrize("offset", [0, 1, 150, 299, 300, 301, 450])
def test_a_copy_of_copy_chars_is_found_wherever_it_starts(offset: int) -> None:
    source = text(5000, 1)
    stretch = source[1000 : 1000 + COPY_CHARS]
    assert copied(text(offset, 2) + stretch + text(200, 3), source) == COPY_CHARS
    assert copied(text(offset, 2) + stretch[1:] + text(200, 3), source) == 0


def test_short_copies_do_not_add_up() -> None:
    """Many quotes (paths, lines) shorter than COPY_CHARS, from all over the source."""
    source = text(20_000, 4)
    quotes = [source[i : i + COPY_CHARS - 1] for i in range(0, 19_000, 700)]
    assert copied("|".join(quotes), source) == 0  # "|" is in no quote: none is longer


def test_overlapping_and_separate_copies_are_counted_once() -> None:
    source = text(20_000, 5)
    two = source[100:1300] + "|" + source[5000:5700] + "|" + source[100:700]
    assert copied(two, source) == 1200 + 700 + 600


def test_a_copy_of_repetitive_output_is_found() -> None:
    assert copied("noted: " + READ[:COPY_CHARS], "[user]\nhi\n\n" + READ) == COPY_CHARS
    assert copied("noted: " + READ[: COPY_CHARS - 1], "[user]\nhi\n\n" + READ) == 0


def test_the_request_said_back_is_an_echo_a_summary_with_its_headings_is_not() -> None:
    assert echoed(AFTER, [DEFAULT_PROMPT, AFTER])
    assert echoed(f"Summary:\n{AFTER.split('. ')[0]}.", [DEFAULT_PROMPT, AFTER])
    summary = "## Goal\nFix the parser in src/parse.py.\n## Progress\nRead f0.py to f4.py."
    assert not echoed(summary, [DEFAULT_PROMPT, AFTER])


async def second_compaction(second: str) -> tuple[list[Any], list[Any]]:
    """Two turns, each compacted: the first summary is PREVIOUS, the merge ``second``."""
    model = ScriptedModel([*reads(5), *reads(5)], context_window=WINDOW)
    summariser = summarizer(PREVIOUS, second)
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task one")
        events = await run_turn(agent, "task two")
        assert check_invariants(agent.session.events) == []
        history = list(agent.session.history)
    summariser.assert_complete()
    return events, history


async def test_noted_and_a_copy_of_the_transcript_is_refused() -> None:
    events, history = await second_compaction("noted\n\n" + READ[: COPY_CHARS + 50])

    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "SUMMARY_COPIED")
    assert f"stretches of {COPY_CHARS} characters or more" in end.data["error"]["message"]
    assert history[0] == summary_of(PREVIOUS)


async def test_a_summary_quoting_a_path_and_an_error_line_is_kept() -> None:
    good = f"{PREVIOUS}\n## Progress\nRead f3.py: `{OUTPUT[:80]}`; error: {ERROR}"
    events, history = await second_compaction(good)

    assert events_of(events)[-1].data["outcome"] == "summarized"
    assert history[0] == summary_of(good)


async def test_a_summary_quoting_a_long_passage_among_its_own_words_is_kept() -> None:
    """The default prompt asks for the user's words quoted: a quote longer than
    COPY_CHARS is no copy of the transcript while the summary's own words are as many."""
    own = "\n".join(f"- step {i}: read f{i % 5}.py and noted its lines" for i in range(25))
    good = f"{PREVIOUS}\n## Progress\n{own}\nAs read:\n{READ[: COPY_CHARS + 100]}"
    assert len(good) > 2 * (COPY_CHARS + 100)
    events, history = await second_compaction(good)

    assert events_of(events)[-1].data["outcome"] == "summarized"
    assert history[0] == summary_of(good)


async def test_the_closing_line_said_back_is_refused() -> None:
    # a summary that echoes the closing line after it is mostly a summary: kept
    events, history = await second_compaction(f"{PREVIOUS}\n{AFTER}")
    assert events_of(events)[-1].data["outcome"] == "summarized"

    events, history = await second_compaction(AFTER)
    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "SUMMARY_ECHOED")
    assert history[0] == summary_of(PREVIOUS)
