"""An HTTP-date ``Retry-After`` with no zone offset (the asctime form, which RFC 9110
5.6.7 tells recipients to accept, and ``-0000``) is GMT, whatever the local time zone.

Before: ``parsedate_to_datetime`` gave a naive datetime for both, and ``.timestamp()``
read it as local time: west of UTC a 10 s wait became hours (over ``max_wait``, so the
request failed at once), east of UTC it became 0."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator

import pytest
from llm_wire import WireServer, error
from test_llm_http import fails, openai

from dsh.llm._retry_after import retry_after

NOW = 1_796_000_000.0  # a whole second: the HTTP date holds no fraction


@pytest.fixture(params=["America/Los_Angeles", "Asia/Tokyo", "UTC"])
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def asctime(when: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(when))  # Sun Nov  6 08:49:37 1994


def minus_zero(when: float) -> str:
    return email.utils.formatdate(when).replace("+0000", "-0000")


@pytest.mark.parametrize(
    "form", [asctime, minus_zero, lambda when: email.utils.formatdate(when, usegmt=True)]
)
def test_an_http_date_without_a_zone_is_gmt(zone: str, form: Callable[[float], str]) -> None:
    assert retry_after({"retry-after": form(NOW + 10)}, NOW) == 10.0


async def test_a_refused_requests_asctime_retry_after_is_its_wait(zone: str) -> None:
    limited = error(
        429, {"error": {"message": "later"}}, {"retry-after": asctime(time.time() + 30)}
    )
    async with WireServer([limited]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert err.code == "RATE_LIMIT"
    assert err.retry_after is not None and 20 <= err.retry_after <= 31
