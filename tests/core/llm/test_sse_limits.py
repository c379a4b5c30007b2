"""A line without its end, or an event's data, over ``dsh.llm._sse.EVENT_LIMIT`` is
MALFORMED_RESPONSE naming the limit, and a long line is read in linear time (found by
a review of the provider fixes: each piece was appended to all that came before it, so
50 MB without a newline took 31 s, and nothing bounded it)."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, sse
from test_llm_http import fails, openai

from dsh.errors import ModelError
from dsh.llm import _sse
from dsh.llm._sse import SSEParser

MIB = 1024 * 1024


def _feed_over_the_limit(piece: bytes) -> None:
    parser = SSEParser()
    for _ in range(_sse.EVENT_LIMIT // MIB + 1):
        parser.feed(piece)


def test_a_line_over_the_limit_without_its_end_is_malformed() -> None:
    with pytest.raises(ModelError) as caught:
        _feed_over_the_limit(b"x" * MIB)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert f"{_sse.EVENT_LIMIT // MIB} MiB" in caught.value.message


def test_an_events_data_over_the_limit_is_malformed() -> None:
    with pytest.raises(ModelError) as caught:
        _feed_over_the_limit(b"data: " + b"x" * MIB + b"\n")
    assert caught.value.code == "MALFORMED_RESPONSE"


def test_a_long_line_in_small_pieces_is_read_in_linear_time() -> None:
    """Counted, not timed: each piece of a line not ended yet is kept as it came (the
    very object, not copied onto the pieces before it, ~8 GB for these 16 MiB), and
    the line is joined once it ends."""
    parser = SSEParser()
    pieces = [b"y" * 16384 for _ in range(16 * MIB // 16384)]  # 16 MiB: 1024 pieces
    for n, piece in enumerate(pieces):
        assert parser.feed(b"data: " + piece if not n else piece) == []
    held = parser._held  # what the parser keeps of the line
    assert len(held) == len(pieces)
    assert all(kept is piece for kept, piece in zip(held[1:], pieces[1:], strict=True))
    assert parser.feed(b"\n\n") == ["y" * (16 * MIB)]


async def test_the_model_says_which_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sse, "EVENT_LIMIT", 4096)
    async with WireServer([sse([b"data: " + b"z" * 3000, b"z" * 3000])]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert err.code == "MALFORMED_RESPONSE"
    assert "model 'wire'" in err.message and "4 KiB" in err.message
