"""Which part of a credential header is a secret (``dsh._secrets.header_secrets``).

An ``Authorization``-like header (any name ending in ``authorization``: ``X-Authorization``,
Cloudflare AI Gateway's ``cf-aig-authorization``, ``Proxy-Authorization``) written
``<scheme> <credentials>`` has its credentials hidden, when they are 8 characters or
more as any key must be; a value with no scheme is hidden whole under the same rule.

Before: the whole value (``Bearer ollama``, vLLM's ``Bearer EMPTY``) was a secret, and
``redact``, which hides each run of 8 characters or more that begins or ends a secret,
garbled ordinary text in tool results, answers and logs ("start your ollama server" ->
"start you*** server"); and ``X-Authorization: Bearer <token>`` was no credential."""

from __future__ import annotations

import pytest

from dsh._secrets import header_secrets, redact
from dsh.harness import Harness

TOKEN = "gwtok-Hs41Wq07Nb62Cc18"


@pytest.mark.parametrize(
    ("name", "value", "hidden"),
    [
        ("Authorization", f"Bearer {TOKEN}", (TOKEN,)),
        ("Authorization", f"Bearer\t{TOKEN}", (TOKEN,)),  # a tab after the scheme
        ("Authorization", f" Token  {TOKEN} ", (TOKEN,)),
        ("Proxy-Authorization", f"Basic {TOKEN}", (TOKEN,)),
        ("X-Authorization", f"Bearer {TOKEN}", (TOKEN,)),
        ("cf-aig-authorization", f"Bearer {TOKEN}", (TOKEN,)),
        ("X-Forwarded-Authorization", f"Bearer {TOKEN}", (TOKEN,)),
        ("Authorization", TOKEN, (TOKEN,)),  # no scheme: the whole value
        ("Authorization", "Bearer ollama", ()),  # Ollama's documented placeholder
        ("Authorization", "Bearer EMPTY", ()),  # vLLM's
        ("Authorization", "Bearer x", ()),
        ("Authorization", "short", ()),
        ("Authorization", "", ()),
    ],
)
def test_an_authorization_header_hides_what_follows_its_scheme(
    name: str, value: str, hidden: tuple[str, ...]
) -> None:
    assert header_secrets({name: value}) == hidden


SAMPLES = [
    "Install it and start your ollama server, then run for ollama models.",
    "Send the header as Bearer or Basic; Bearer over TLS only.",
    "curl -H 'Authorization: Bearer EMPTY' http://localhost:8000/v1/models",
    "Bearer EMPTY-string check; the EMPTY value works",
]


@pytest.mark.parametrize("value", ["Bearer ollama", "Bearer EMPTY"])
async def test_a_short_placeholder_token_hides_no_ordinary_text(value: str) -> None:
    text = (
        "models:\n  local:\n    provider: openai-compatible\n    model: llama3\n"
        "    base_url: http://127.0.0.1:11434/v1\n"
        f"    headers: {{Authorization: '{value}'}}\n"
    )
    async with Harness(load_entry_points=False, env={}, config_text=text) as harness:
        secrets = harness.secrets()
    for sample in SAMPLES:
        assert redact(sample, secrets) == sample
