"""An error's body trickled a byte at a time, each byte in time for the read timeout, is
read for the read timeout in all, not until its 64 KiB are in (found by a review of the
providers: a proxy that trickled its error page held the request for as long as it
liked, each byte resetting the read timeout)."""

from __future__ import annotations

import anyio
import pytest
from llm_wire import Reply, WireServer
from test_llm_http import fails, openai

# a byte every 50 ms: 20 s for the body, far past the test's limit
BODY = [b"x"] * 400
READ_TIMEOUT = 0.5


@pytest.mark.parametrize(
    ("status", "content_type", "code"),
    [(500, "text/plain", "SERVER"), (200, "application/json", "MALFORMED_RESPONSE")],
)
async def test_a_trickled_error_body_is_read_for_the_read_timeout(
    status: int, content_type: str, code: str
) -> None:
    reply = Reply(status, BODY, {"content-type": content_type}, pause=0.05)
    async with WireServer([reply]) as server:
        with anyio.fail_after(10):  # a body read to its end: 20 s
            err = await fails(openai(server.url, read_timeout=READ_TIMEOUT, max_retries=0))
    assert err.code == code
    assert "xxx" in err.message  # what came is quoted
