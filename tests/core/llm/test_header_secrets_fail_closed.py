"""Every value written into a model's ``headers:`` is a secret (8 characters or more),
but those of a few headers known to carry none (``User-Agent``, ``Accept*``,
``Content-Type``, the version and beta headers, OpenAI's organization and project,
OpenRouter's ``HTTP-Referer`` and ``X-Title``): a credential under any other name
(``Cookie``, ``X-Authentication``, ``X-Goog-Iap-Jwt-Assertion``) is hidden from the
model's errors, the retry warnings, the session and tool results.

Before: only a name the key-name rule knew (``...key``, ``...token``, ``...secret``,
``...authorization``) was a credential's, so a gateway's 500 page quoting the request's
headers put a ``Cookie: CF_Authorization=...`` whole into the terminal, the log and the
session file."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from llm_wire import Reply, WireServer, sse

from dsh._secrets import header_secrets
from dsh.harness import Harness
from dsh.testing import run_turn

COOKIE = "COOKIESECRET0123456789"
TOKEN = "HDRtok-Zq81Lm03Xv55Pp27"


@pytest.mark.parametrize(
    ("name", "value", "hidden"),
    [
        ("Cookie", f"CF_Authorization={COOKIE}", (f"CF_Authorization={COOKIE}", COOKIE)),
        ("cookie", f"a=1; session_x={COOKIE}", (f"a=1; session_x={COOKIE}", COOKIE)),
        ("X-Authentication", TOKEN, (TOKEN,)),
        ("X-Authentication", f"Bearer {TOKEN}", (TOKEN,)),  # a scheme: what follows it
        ("X-Goog-Iap-Jwt-Assertion", TOKEN, (TOKEN,)),
        ("X-Request-Source", "dsh-gateway-0123456789", ("dsh-gateway-0123456789",)),
        ("X-Custom", "short", ()),  # under 8 characters, as a key
        ("X-Custom", "Bearer ollama", ()),  # a placeholder token after a scheme
        ("X-Authentication", "hunter2hunter2", ("hunter2hunter2",)),  # named: any value
        ("X-Api-Key", "correcthorsebattery", ("correcthorsebattery",)),
        # words, not tokens: a person's prompt has them (review of this fix)
        ("X-Environment", "production", ()),
        ("X-Portkey-Provider", "anthropic", ()),
        ("X-Region", "production-eu-west-1", ()),
        ("X-Gateway-Name", "MyCompanyGatewayClient", ()),
        ("Cache-Control", "no-cache, no-store, must-revalidate", ()),
        ("Prefer", "wait=30-seconds-at-most", ()),
        ("User-Agent", "my-app/1.0 (gateway client)", ()),
        ("Accept", "text/event-stream", ()),
        ("Accept-Encoding", "gzip, deflate, br", ()),
        ("Content-Type", "application/json; charset=utf-8", ()),
        ("anthropic-version", "2023-06-01-preview", ()),
        ("anthropic-beta", "interleaved-thinking-2025-05-14", ()),
        ("OpenAI-Beta", "assistants=v2-preview", ()),
        ("api-version", "2024-10-21-preview", ()),
        ("OpenAI-Organization", "org-0123456789abcdef", ()),
        ("OpenAI-Project", "proj_0123456789abcdef", ()),
        ("HTTP-Referer", "https://my-app.example", ()),
        ("X-Title", "My gateway application", ()),
    ],
)
def test_every_header_value_is_a_secret_but_the_known_harmless_ones(
    name: str, value: str, hidden: tuple[str, ...]
) -> None:
    assert set(header_secrets({name: value})) == set(hidden)


async def test_a_500_page_quoting_cookie_and_x_authentication_shows_them_hidden(
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = f"Cookie: CF_Authorization={COOKIE}\nX-Authentication: {TOKEN}\n".encode()
    replies = [Reply(500, page, {"content-type": "text/plain"})] * 2
    async with WireServer(replies) as server:
        text = (
            f"models:\n  gw:\n    provider: openai-compatible\n    model: m\n"
            f"    base_url: {server.url}\n    max_retries: 1\n"
            f"    headers: {{Cookie: 'CF_Authorization={COOKIE}', X-Authentication: {TOKEN}}}\n"
            "agents:\n  - id: main\n    model: gw\n"
        )
        with caplog.at_level(logging.WARNING):
            async with Harness(config_text=text, load_entry_points=False, env={}) as harness:
                agent = harness.agents.get("main")
                assert agent is not None
                events = await run_turn(agent, "go")
                assert COOKIE in harness.secrets() and TOKEN in harness.secrets()
        assert server.requests[0].headers["cookie"] == f"CF_Authorization={COOKIE}"  # as given
    end: Any = events[-1]
    assert end.data["reason"] == "error"
    assert "Cookie: *** X-Authentication: ***" in end.data["error"]["message"]
    logged = [record.getMessage() for record in caplog.records]
    assert any("retrying" in line for line in logged)
    for shown in (repr([e.data for e in events]), *logged):
        assert COOKIE not in shown and TOKEN not in shown


async def test_a_header_value_that_is_a_word_leaves_a_prompt_as_typed() -> None:
    """Every header value was taken for a secret, so a prompt naming the environment
    (``X-Environment: production``) reached the model, the terminal and the session
    with ``***`` in its place, and a warning called the word an API key."""
    body = b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    async with WireServer([sse(body + b"data: [DONE]\n\n")]) as server:
        text = (
            f"models:\n  gw:\n    provider: openai-compatible\n    model: m\n"
            f"    base_url: {server.url}\n"
            "    headers: {X-Environment: production, Cache-Control: no-cache}\n"
            "agents:\n  - id: main\n    model: gw\n"
        )
        async with Harness(config_text=text, load_entry_points=False, env={}) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "deploy to production with no-cache")
    sent = json.loads(server.requests[0].body)["messages"][-1]["content"]
    assert sent == "deploy to production with no-cache"
    assert events[1].data["content"] == sent
