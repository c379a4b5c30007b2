"""A number YAML reads as a string (``timeout: 1e3``: YAML 1.1 wants ``1.0e+3``; a quoted
``'60'``) is refused saying so, not only "Input should be a valid number"
(core/src/dsh/_config_errors.py reason)."""

from __future__ import annotations

import pytest

from dsh.config import load_config
from dsh.errors import ConfigError

HINT = "YAML read it as a string"


@pytest.mark.parametrize(
    ("setting", "start"),
    [
        ("timeout: 1e3", "Input should be a valid number"),
        ("timeout: 1.5e3", "Input should be a valid number"),
        ("timeout: '60'", "Input should be a valid number"),
        ("max_retries: 1e1", "Input should be a valid integer"),
    ],
)
def test_a_number_read_as_a_string_is_said_to_be_one(setting: str, start: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(text=f"models:\n  m: {{provider: openai, model: x, {setting}}}\n")
    assert caught.value.reason.startswith(start)
    assert HINT in caught.value.reason and "1.0e+3" in caught.value.reason


@pytest.mark.parametrize("setting", ["timeout: yes", "timeout: fast", "max_retries: [1]"])
def test_other_values_get_no_such_hint(setting: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(text=f"models:\n  m: {{provider: openai, model: x, {setting}}}\n")
    assert HINT not in caught.value.reason


def test_a_number_with_yaml_1_1_exponent_loads() -> None:
    config = load_config(text="models:\n  m: {provider: openai, model: x, timeout: 1.0e+3}\n")
    assert config.models["m"].timeout == 1000.0
