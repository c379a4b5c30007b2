"""A model's ``headers`` in dsh.yml: a variable in a value (``Bearer ${GW_TOKEN}``) is
refused, as in ``base_url`` (dsh.yml expands none: it would be sent as written, the
gateway's token never read), and so are two names of one header differing in case
(``X-A`` and ``x-a``: both were sent), each naming the key.

Before: both were accepted without a word."""

from __future__ import annotations

import pytest

from dsh.config import load_config
from dsh.errors import ConfigError

_ENTRY = "models:\n  m:\n    provider: openai-compatible\n    base_url: http://h/v1\n"


def _refused(headers: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(text=f"{_ENTRY}    headers: {headers}\n")
    return caught.value


@pytest.mark.parametrize(
    "value", ["${GW_TOKEN}", "Bearer ${GW_TOKEN}", "Bearer $GW_TOKEN", "$GW_TOKEN", "a${B}c"]
)
def test_a_variable_in_a_header_value_is_refused(value: str) -> None:
    error = _refused(f'{{X-Token: "{value}"}}')
    assert error.path == "models.m.headers.X-Token"
    assert "holds a variable" in error.reason and "api_key_env" in error.reason


@pytest.mark.parametrize("value", ["$5 off", "$Version=1; a=b", "US$", "cost: $"])
def test_a_dollar_that_is_no_variable_is_sent(value: str) -> None:
    config = load_config(text=f'{_ENTRY}    headers: {{X-Note: "{value}"}}\n')
    assert config.models["m"].headers == {"X-Note": value}


def test_two_names_of_one_header_are_refused_naming_both() -> None:
    error = _refused('{X-A: "1", x-a: "2"}')
    assert error.path == "models.m.headers.x-a"
    assert error.reason.startswith("'x-a' names the same header as 'X-A' (header names are not")
    assert ":5:" in error.source  # the second name's line
