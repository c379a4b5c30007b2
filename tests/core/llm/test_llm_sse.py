"""The SSE parser: the WHATWG event-stream rules, however the bytes are cut."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh.llm._sse import SSEParser


def parse(*pieces: bytes) -> list[str]:
    parser = SSEParser()
    return [data for piece in pieces for data in parser.feed(piece)] + parser.end()


def test_events_are_dispatched_by_a_blank_line() -> None:
    assert parse(b"data: one\n\ndata: two\n\n") == ["one", "two"]
    assert parse(b"data: pending\n") == []  # not dispatched yet


def test_data_lines_join_with_lf_and_fields_follow_the_standard() -> None:
    stream = (
        b": a comment\n"
        b"event: message_start\n"
        b"id: 7\n"
        b"retry: 1000\n"
        b"data: first\n"
        b"data:second\n"
        b"data:  two spaces keep one\n"
        b"data\n"
        b"unknown: field\n"
        b"\n"
    )
    assert parse(stream) == ["first\nsecond\n two spaces keep one\n"]


def test_an_event_without_data_is_not_dispatched_but_empty_data_is() -> None:
    assert parse(b"event: ping\n\n: keep-alive\n\ndata:\n\n") == [""]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(end: bytes) -> None:
    stream = b"data: a" + end + b"data: b" + end + end + b"data: c" + end + end
    assert parse(stream) == ["a\nb", "c"]
    assert parse(*(stream[i : i + 1] for i in range(len(stream)))) == ["a\nb", "c"]


def test_a_cr_at_the_end_of_a_piece_waits_for_a_possible_lf() -> None:
    # "\r" then "\n" in the next piece is ONE line end: no extra blank line
    assert parse(b"data: a\r", b"\ndata: b\r\n\r\n") == ["a\nb"]
    # ...and a CR that ends the stream is a line end
    parser = SSEParser()
    assert parser.feed(b"data: a\r\r") == []
    assert parser.end() == ["a"]


def test_a_leading_bom_is_skipped_even_when_cut() -> None:
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n") == ["x"]
    assert parse(b"\xef\xbb\xbfdata: y\n\n") == ["y"]


def test_utf8_cut_inside_a_character_and_invalid_bytes() -> None:
    stream = "data: 12 ✓ é\n\n".encode()
    cut = stream.index(b"\x9c")  # inside the three bytes of ✓
    assert parse(stream[:cut], stream[cut:]) == ["12 ✓ é"]
    assert parse(b"data: \xff!\n\n") == ["\ufffd!"]


def test_an_incomplete_last_event_is_discarded() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: done\n\ndata: [DONE]\n") == ["done"]
    assert parser.feed(b"") == []
    assert parser.end() == []


line_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12
)
events = st.lists(st.lists(line_text, min_size=1, max_size=3), max_size=6)


# no time limits: a busy machine can stall one example for a second (the 200 ms default
# deadline failed under CPU load); what is checked is the result, not the speed
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=events,
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=1, max_size=4),
    comments=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_any_stream_cut_anywhere_gives_the_same_events(
    events: list[list[str]], ends: list[bytes], comments: bool, cuts: list[int]
) -> None:
    # a lone CR followed by the LF of the next line end reads as one CRLF: a stream
    # that mixes endings never ends a line with a lone CR
    if len(set(ends)) > 1:
        ends = [b"\r\n" if end == b"\r" else end for end in ends]
    stream = b""
    n = 0
    for lines in events:
        if comments:
            stream += b": tick" + ends[n % len(ends)]
            n += 1
        for line in lines:
            stream += b"data: " + line.encode() + ends[n % len(ends)]
            n += 1
        stream += ends[n % len(ends)]
        n += 1
    points = sorted({c for c in cuts if c < len(stream)} | {0, len(stream)})
    pieces = [stream[a:b] for a, b in itertools.pairwise(points)]
    assert parse(*pieces) == ["\n".join(lines) for lines in events]
