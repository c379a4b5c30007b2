"""Where a ``ModelError``'s ``retry_after`` comes from, and its bounds, over the
loopback server.

Before: only the ``retry-after-ms`` / ``retry-after`` headers of a refused request (429,
503, ...) filled it. An error body that said how long to wait (``retry_after`` in the
error object, or beside it) was not read, neither in a refused request's body nor in an
error sent inside the stream; and a header's number was taken as it came: ``nan``
made a NaN wait (never waited for, since no comparison holds: the retry was given up at
once) and ``inf``, ``1e400`` or eleven digits an endless or centuries-long one, each
written as such into ``turn/end``'s error. Now a body's ``retry_after`` (seconds) is
read when no header gives one, and every wait is a number from 0 to a day
(``MAX_RETRY_AFTER``); an unreadable one (NaN) is none.
"""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from llm_wire import WireServer, collect, error, sse
from test_llm_http import ASK, TEXT, anthropic, fails, openai

from dsh.harness import Harness
from dsh.llm._retry_after import MAX_RETRY_AFTER
from dsh.testing import run_turn

OPENAI_START = b'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'


def data(payload: object) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


# -- a refused request ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"message": "slow down", "type": "rate_limit_error", "retry_after": 7}},
        {"error": {"message": "slow down"}, "retry_after": "7"},
    ],
)
async def test_a_429_body_that_says_how_long_to_wait_fills_retry_after(
    payload: dict[str, object],
) -> None:
    async with WireServer([error(429, payload)]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert (err.code, err.retry_after) == ("RATE_LIMIT", 7)


async def test_the_header_wins_over_the_body() -> None:
    payload = {"error": {"message": "busy", "retry_after": 30}}
    async with WireServer([error(503, payload, {"retry-after": "4"})]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert (err.code, err.retry_after) == ("SERVER", 4)


async def test_a_body_s_short_wait_is_honoured_by_the_retry() -> None:
    limited = error(429, {"error": {"message": "slow down", "retry_after": 0.3}})
    async with WireServer([limited, sse(TEXT)]) as server:
        _, message = await collect(openai(server.url, max_retries=1), ASK)
        first, second = server.requests
    assert message.text.startswith("Voilà")
    assert second.at - first.at >= 0.3


async def test_anthropic_s_retry_after_header_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    async with WireServer([error(529, overloaded, {"retry-after": when})]) as server:
        err = await fails(anthropic(server.url, max_retries=0))
    assert err.code == "SERVER"
    assert err.retry_after is not None and 25 <= err.retry_after <= 31


# -- an error inside the stream ------------------------------------------------------------


async def test_an_error_in_the_stream_that_says_how_long_to_wait_fills_retry_after() -> None:
    cut = {"error": {"message": "rate limited mid-answer", "code": 429, "retry_after": 12}}
    async with WireServer([sse([OPENAI_START, data(cut)])]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1  # streamed: never replayed
    assert (err.code, err.retry_after) == ("RATE_LIMIT", 12)


async def test_an_anthropic_error_event_with_retry_after_fills_it() -> None:
    start = (
        b"event: message_start\n"
        b'data: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\n'
    )
    event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    event["retry_after"] = 2.5
    body = start + b"event: error\n" + data(event)
    async with WireServer([sse(body)]) as server:
        err = await fails(anthropic(server.url))
    assert (err.code, err.retry_after) == ("SERVER", 2.5)


async def test_an_error_in_the_stream_without_a_wait_has_none() -> None:
    cut = {"error": {"message": "boom"}}
    async with WireServer([sse([OPENAI_START, data(cut)])]) as server:
        err = await fails(openai(server.url))
    assert (err.code, err.retry_after) == ("SERVER", None)


# -- bounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "1e400", "99999999999", "Infinity"])
async def test_a_huge_retry_after_is_capped_at_a_day_and_not_waited_for(value: str) -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": value})
    async with WireServer([limited, sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert (err.code, err.retry_after) == ("RATE_LIMIT", MAX_RETRY_AFTER)


async def test_a_nan_retry_after_is_none_and_the_usual_backoff_retries() -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": "nan"})
    async with WireServer([limited, sse(TEXT)]) as server:
        _, message = await collect(openai(server.url, max_retries=1), ASK)
        assert len(server.requests) == 2
    assert message.text.startswith("Voilà")


@pytest.mark.parametrize(("value", "wait"), [("nan", None), ("inf", MAX_RETRY_AFTER)])
async def test_turn_end_s_error_holds_a_finite_wait_or_none(value: str, wait: float | None) -> None:
    config = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\n    max_retries: 0\nagents:\n  - id: main\n    model: wire\n"
    )
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": value})
    async with WireServer([limited]) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    end = events[-1].data
    assert (end["reason"], end["error"]["code"]) == ("error", "RATE_LIMIT")
    assert end["error"].get("retry_after") == wait
    json.dumps(end, allow_nan=False)  # valid JSON: no NaN, no Infinity
