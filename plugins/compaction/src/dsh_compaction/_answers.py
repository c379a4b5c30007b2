"""The checks of each answer of the summariser model: a weak model may answer with
something other than a summary, which must not replace the history.

- ``EMPTY_SUMMARY``: it is empty, as a summary a plugin wrote may be (``_failures``): for a
  region summarised in chunks, an empty answer of any chunk (a first chunk's, taken
  for a summary of nothing, left the next chunk's answer standing for the whole region).
- ``SUMMARY_TOO_SHORT``: it merges a summary (the previous one, or the answer for the
  chunks before) and is under a quarter of its length: it answered the transcript
  ("noted") and dropped that summary. A merged summary longer than the answer can hold
  (a plugin's, one written under a larger ``max_summary_tokens``) is measured as the
  length the answer can hold: a summariser keeping to ``max_tokens`` cannot write a
  quarter of a summary more than four answers long.
- ``SUMMARY_UNCHANGED``: it is the summary it merges, unchanged (letters and digits
  compared), and that summary is under ``UNCHANGED_CHARS`` characters: a summary already
  "noted" (stored before the quarter rule) gives that rule nothing to protect; this one
  keeps a "noted" answer from covering more messages. A longer summary said back
  unchanged is a summary (the messages it merges may add nothing to it), and so is a
  later chunk's answer that is the summary so far.
- ``SUMMARY_COPIED``: it merges a summary and most of it (more than half its
  characters) is stretches of ``COPY_CHARS`` characters or more of the transcript,
  repeated verbatim ("noted", then the transcript copied until the output limit, the
  summary it merges lost). A summary quotes a path, a command, an error line, or the
  user's own words (the default prompt asks it to): a quote longer than ``COPY_CHARS``
  among the summary's own words is kept, and so is a first summary (nothing merged,
  nothing to lose) that is mostly a long quote of the user's request.
- ``SUMMARY_ECHOED``: it is mostly the request's own instructions (its system prompt
  or closing line) said back. A heading or label of the instructions (a line starting
  with ``#`` or ending with ``:``) is no instruction: a summary filling in a template
  says them back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from dsh import ModelError

__all__ = [
    "COPY_CHARS",
    "ECHO_CHARS",
    "UNCHANGED_CHARS",
    "Refused",
    "copied",
    "echoed",
    "empty",
    "refusal",
]

#: the shortest verbatim copy of the transcript that refuses an answer
COPY_CHARS: Final = 600
#: the shortest sentence of the instructions whose echo counts (headings and labels do
#: not count, whatever their length)
ECHO_CHARS: Final = 20
#: a merged summary shorter than this said back unchanged is refused: a "noted" stored
#: summary, against which an acknowledgement (under 20 characters) passes the quarter
#: rule; a longer one is a summary, which new messages may leave as it was
UNCHANGED_CHARS: Final = 80


def empty(who: str) -> str:
    """The message of an empty summary written by ``who`` (``model 'm'``, ``plugin 'x'``)."""
    return f"the summariser ({who}) wrote nothing"


class Refused(ModelError):
    """An answer refused by these checks. ``so_far``: for a later chunk's answer, the
    summary of the chunks before it (merging the previous summary), which passed them."""

    so_far: str | None = None


def copied(answer: str, source: str, size: int = COPY_CHARS) -> int:
    """How many characters of ``answer`` lie in stretches of at least ``size``
    characters that are in ``source`` too. Every such stretch holds one of the parts of
    ``answer`` that start at a multiple of ``size // 2`` and are ``size - size // 2 + 1``
    long: when none is in ``source`` (a summary), there is none; else each
    ``size``-long stretch of ``source`` is looked up among those of ``answer`` (by hash,
    then compared), and the stretches found are merged. A stretch of ``answer`` found
    is looked up no more: each is compared once when found (a long run of one character
    makes all of them one hash), not once for each place of ``source`` that has it."""
    if len(answer) < size or len(source) < size:
        return 0
    stride = size // 2
    part = size - stride + 1
    starts = range(0, len(answer) - part + 1, stride)
    if not any(answer[start : start + part] in source for start in starts):
        return 0
    stretches: dict[int, list[int]] = {}
    for start in range(len(answer) - size + 1):
        stretches.setdefault(hash(answer[start : start + size]), []).append(start)
    found: list[int] = []
    for at in range(len(source) - size + 1):
        stretch = source[at : at + size]
        key = hash(stretch)
        if key not in stretches:
            continue
        left: list[int] = []
        for start in stretches[key]:
            (found if answer[start : start + size] == stretch else left).append(start)
        if left:  # another stretch of the same hash
            stretches[key] = left
        else:
            del stretches[key]
    covered, end = 0, 0
    for start in sorted(found):  # the union of [start, start + size)
        covered += start + size - max(start, end)
        end = start + size
    return covered


_SENTENCE = re.compile(r"(?<=[.:?!])\s+|\n+")
_WORDS = re.compile(r"\W+")


def _letters(text: str) -> str:
    return _WORDS.sub("", text).lower()


def _label(sentence: str) -> bool:
    """Whether a sentence of the instructions is a heading (``## Files``) or a label
    (``Pending tasks:``) of the template they ask for."""
    return sentence.startswith("#") or sentence.endswith(":")


def echoed(answer: str, instructions: Iterable[str]) -> bool:
    """Whether ``answer`` is mostly sentences of ``instructions`` said back: less than
    half of its letters and digits are left once they are taken out. Headings and
    labels (``_label``) are not taken out: a summary filling in a template says them."""
    rest = total = _letters(answer)
    for text in instructions:
        for sentence in map(str.strip, _SENTENCE.split(text)):
            said = _letters(sentence)
            if len(sentence) >= ECHO_CHARS and said and not _label(sentence):
                rest = rest.replace(said, "")
    return len(rest) * 2 < len(total)


def refusal(
    text: str,
    merged: str,
    transcript: str,
    instructions: Iterable[str],
    *,
    later: bool = False,
    holds: int | None = None,
    model: str | None = None,
) -> Refused | None:
    """Why the summariser's answer ``text`` is no summary (None: it may be one).
    ``merged``: the summary it merges; ``transcript``: the conversation it was given;
    ``instructions``: the request's own text (system prompt, closing line); ``later``:
    the answer of a chunk after the first, ``merged`` the summary of those before;
    ``holds``: about how many characters the answer can hold (``max_tokens``), when
    ``merged`` is longer; ``model``: the summariser's name, which an empty answer's
    message gives (as a ``REFUSED`` one's does)."""
    if not text:
        later_part = " for a later part of the conversation, summarised in parts" if later else ""
        who = f"model {model!r}" if model else "model"
        return Refused("EMPTY_SUMMARY", empty(who) + later_part)
    measure = len(merged) if holds is None else min(len(merged), holds)
    if len(text) * 4 < measure:  # dropped what it merged ("noted")
        capped = ""
        if measure < len(merged):
            capped = f", more than its answer can hold (~{measure} characters),"
        return Refused(
            "SUMMARY_TOO_SHORT",
            f"the summary ({len(text)} characters) merges a previous summary of "
            f"{len(merged)} characters{capped} and is less than a quarter of "
            f"{'that' if capped else 'its length'}",
        )
    if not later and 0 < len(merged) < UNCHANGED_CHARS and _letters(text) == _letters(merged):
        return Refused(
            "SUMMARY_UNCHANGED",
            f"the summary is the previous summary ({len(merged)} characters) unchanged: "
            "nothing of the conversation it was given is in it",
        )
    copy = copied(text, transcript) if merged else 0  # a first summary loses nothing
    if copy * 2 > len(text):
        return Refused(
            "SUMMARY_COPIED",
            f"the summary ({len(text)} characters) is mostly ({copy}) stretches of "
            f"{COPY_CHARS} characters or more copied from the conversation verbatim: a "
            "copy of the transcript, not a summary",
        )
    if echoed(text, instructions):
        return Refused(
            "SUMMARY_ECHOED",
            f"the summary ({len(text)} characters) is mostly the summariser's own "
            "instructions said back",
        )
    return None
