"""What the streaming redactor holds back (dsh.llm._redact_stream.StreamRedactor) is
bounded however the text repeats a key's pieces, so each chunk costs little on the event
loop, and every run of the key is still hidden."""

from __future__ import annotations

import pytest
from test_secrets_study_errors import KEY

from dsh._secrets import redact
from dsh.llm._redact_stream import SHORTEST_HELD, StreamRedactor

# -- text made of a key's pieces --------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("sk-" + "x" * 20, "card: " + "x" * 800 + " end"),  # a key of one repeated character
        ("ab" * 10, "ab" * 800),  # a periodic key in periodic text
        (KEY, KEY * 40),
    ],
    ids=["repeated", "periodic", "key-again"],
)
def test_text_of_a_keys_pieces_over_and_over_is_held_briefly_and_hidden(
    key: str, text: str
) -> None:
    # every tail of such text may grow into a run that overlaps the one before: the cut
    # went back over all of them (held the whole text), and each piece searched it again
    # (seconds for 800 characters, a minute for 6400, on the event loop)
    redactor = StreamRedactor((key,))
    shown: list[str] = []
    held = 0
    for i in range(0, len(text), 4):
        shown.append(redactor.feed(text[i : i + 4]))
        held = max(held, len(redactor._held))
    shown.append(redactor.flush())
    assert held <= 2 * len(key)  # bounded: so is each piece's work (not timed: 3.7 s and
    # more before, a busy machine takes any time)
    joined = "".join(shown)
    assert redact(joined, (key,)) == joined
    assert not any(redact(piece, (key,)) != piece for piece in shown)
    # each run hidden, after at most SHORTEST_HELD - 1 characters of it (runs that go
    # on one from the other as one ***: redact hides each whole occurrence apart)
    assert len(joined) <= len(redact(text, (key,))) + SHORTEST_HELD - 1
