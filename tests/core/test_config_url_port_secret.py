"""A key pasted where a ``base_url``'s port goes (``https://gw.example:<key>/v1``) is
refused saying the port is not a number, never quoting it: urllib's own error quotes
the port (``Port could not be cast to integer value as '<key>'``), and dsh put that
text into the error of ``dsh.yml`` and of ``-m``, on the terminal and in logs."""

from __future__ import annotations

import pytest

from dsh.config import load_config
from dsh.errors import ConfigError
from dsh.llm.providers import parse_model_shorthand

KEY = "sk-SECRET0123456789abcdef"


def test_a_key_in_the_port_of_a_base_url_in_dsh_yml_is_not_quoted() -> None:
    text = f"models:\n  gw:\n    provider: openai\n    base_url: https://gw.example:{KEY}/v1\n"
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    assert caught.value.reason == "is not a valid URL (the port is not a number)"
    assert KEY not in str(caught.value) and KEY[:10] not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [f"https://gw.example:{KEY}/v1", f"https://gw.example:{KEY}", f"http://[::1]:{KEY}/v1"],
)
def test_a_key_in_the_port_of_a_model_shorthand_is_not_quoted(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand(f"openai:gpt@{url}")
    said = str(caught.value)
    assert "the port is not a number" in said and ":***" in said
    assert KEY not in said and KEY[:10] not in said, said


def test_a_port_out_of_range_is_told_so() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand("openai:gpt@https://gw.example:99999/v1")
    assert "the port is out of range (0-65535)" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://u:pw-{KEY}@gw.example:{KEY}/v1", "https://***@gw.example:***/v1"),
        (f"https://u:pw-{KEY}@gw.example/v1", "https://***@gw.example/v1"),
    ],
)
def test_a_password_and_a_key_in_the_port_are_hidden_the_host_shown(url: str, shown: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand(f"openai:gpt@{url}")
    assert f"'openai:gpt@{shown}'" in str(caught.value)
