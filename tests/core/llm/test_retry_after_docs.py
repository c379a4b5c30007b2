"""``retry_after`` is not for rate limits only: a 503 with ``Retry-After`` and an error
body with ``retry_after`` (``dsh.llm._errors``) set it too, on the ``ModelError`` that
``agent_request_error`` gets and in ``turn/end``'s error. docs/hooks.md and
docs/python.md said "set for rate limits" / "a rate-limited server"; they now say where
the wait comes from. Over the loopback server, through a harness."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from llm_wire import Reply, WireServer, error

from dsh import hookimpl
from dsh.harness import Harness
from dsh.testing import run_turn

DOCS = Path(__file__).resolve().parents[3] / "docs"
CONFIG = (
    "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
    "    base_url: {url}\n    max_retries: 0\nagents:\n  - id: main\n    model: wire\n"
)


def said(name: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / name).read_text())


@pytest.mark.parametrize(
    ("reply", "code", "wait"),
    [
        (error(503, {"error": {"message": "busy"}}, {"retry-after": "4"}), "SERVER", 4),
        (error(500, {"error": {"message": "busy", "retry_after": 9}}), "SERVER", 9),
        (error(429, {"error": {"message": "slow"}, "retry_after": "3"}), "RATE_LIMIT", 3),
    ],
)
async def test_retry_after_is_the_servers_wait_whatever_the_code(
    reply: Reply, code: str, wait: float
) -> None:
    seen: list[Any] = []

    class Watch:
        @hookimpl
        def agent_request_error(self, error: Any) -> None:
            seen.append((error.code, error.retry_after))

    async with WireServer([reply]) as server:
        text = CONFIG.format(url=server.url)
        async with Harness(config_text=text, plugins=[Watch()], load_entry_points=False) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    assert seen == [(code, wait)]
    assert (events[-1].data["error"]["code"], events[-1].data["error"]["retry_after"]) == (
        code,
        wait,
    )


def test_the_docs_say_so_not_rate_limits_only() -> None:
    hooks, python = said("hooks.md"), said("python.md")
    assert "`error.retry_after` is set for rate limits" not in hooks
    assert "a rate-limited server" not in hooks and "a rate-limited server" not in python
    assert (
        "`error.retry_after` holds the seconds the server asked to wait, whatever the code "
        "(a 429 or a 503 with `Retry-After`, an error body, even one sent inside the "
        "stream, with `retry_after`)"
    ) in hooks
    wording = (
        "the server said how long to wait (a `Retry-After` header on a 429, a 503 or "
        "another error, or `retry_after` in the error's body)"
    )
    assert wording in python
    assert "the seconds the server asked to wait (a `Retry-After` header on a 429" in hooks
