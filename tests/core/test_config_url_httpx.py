"""A ``base_url`` urllib splits but httpx, which sends the requests, refuses (a
zero-width space pasted into the host, a control character in the path) was accepted
by the config's check and raised httpx's ``InvalidURL`` as a traceback from every
command (the bad-input fuzz review); and a URL with no host was said to hold a space."""

from __future__ import annotations

import pytest

from dsh.config import load_config
from dsh.errors import ConfigError
from dsh.llm.providers import parse_model_shorthand


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://api.example\u200b.com/v1", "Invalid IDNA hostname"),
        ("http://gw.example/\x7f", "Invalid non-printable ASCII character in URL"),
    ],
)
def test_a_url_httpx_cannot_send_to_is_refused_at_its_key(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(
            text=f"models:\n  gw: {{provider: openai, base_url: {url!r}}}\n".replace("'", '"')
        )
    assert caught.value.path == "models.gw.base_url"
    assert caught.value.reason.startswith(f"is not a valid URL ({why}")
    with pytest.raises(ConfigError) as shorthand:
        parse_model_shorthand(f"openai:gpt@{url}")
    assert "base_url: is not a valid URL" in str(shorthand.value)


def test_a_shorthand_url_with_no_host_says_so() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand("openai:gpt@http://")
    assert "must be an http:// or https:// URL with a host, no spaces" in str(caught.value)
