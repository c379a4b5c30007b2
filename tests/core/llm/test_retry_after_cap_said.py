"""A server's wait over the cap dsh puts on it (``MAX_RETRY_AFTER``, a day) is said as
capped, with the wait the server asked for (found by a review of the providers:
``Retry-After: 99999`` was said as "the server asks to wait 86400 s", a wait it never
asked for)."""

from __future__ import annotations

import logging

import anyio
import pytest
from llm_wire import WireServer, error, sse, unserved
from test_llm_http import TEXT, fails, openai

from dsh.llm._retry_after import MAX_RETRY_AFTER


async def test_a_wait_over_the_cap_not_waited_for_says_what_the_server_asked() -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": "99999"})
    async with WireServer([limited, sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert err.retry_after == MAX_RETRY_AFTER
    assert unserved(err.message) == (
        "model 'wire': HTTP 429: later (the server asks to wait 86400 s (capped, the most "
        "dsh takes: it asked for 99999 s), more than max_wait 60 s: models.wire.max_wait)"
    )


async def test_a_wait_in_the_body_over_the_cap_says_it_may_have_been_more() -> None:
    limited = error(429, {"error": {"message": "later", "retry_after": 1e9}})
    async with WireServer([limited]) as server:
        err = await fails(openai(server.url))
    assert "wait 86400 s (the most dsh takes; it may have asked for more), more than" in (
        err.message
    )


async def test_the_retry_warning_of_a_capped_wait_says_what_the_server_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": "99999"})
    caplog.set_level(logging.WARNING, logger="dsh.llm._http")
    async with WireServer([limited, sse(TEXT)]) as server:
        model = openai(server.url, max_wait=MAX_RETRY_AFTER)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(fails, model)  # waits the day: cancelled once it says so
            with anyio.fail_after(10):
                while not caplog.records:  # noqa: ASYNC110 (the log is no event)
                    await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()
        await model.aclose()
    (record,) = caplog.records
    assert "; retrying in 86400.0 s (capped, the most dsh takes: it asked for 99999 s) (1 of " in (
        record.getMessage()
    )
