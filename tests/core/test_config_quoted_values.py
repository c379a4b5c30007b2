"""A config error quotes a value cut to ``SHOWN_CHARS`` characters, its length said: a
20,000-character rule or a 2 MB name was printed whole. A number too large for Python to
read is said to be one, not with Python's advice (``sys.set_int_max_str_digits()``)
(core/src/dsh/_quoted.py shown, _config_yaml.py _unreadable; _config_errors.py reason)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, field_validator

from dsh._quoted import SHOWN_CHARS
from dsh.config import load_config
from dsh.errors import ConfigError


class Rules(BaseModel):
    rule: str = ""

    @field_validator("rule")
    @classmethod
    def _checked(cls, value: str) -> str:
        raise ValueError(f"{value!r}: the pattern must end with ')'")


def refused(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(text=text, settings={"rules": Rules}, blocked={"x"}.__contains__)
    return str(info.value)


def test_a_long_value_a_validator_quotes_is_cut() -> None:
    said = refused(f"rules:\n  rule: 'bash({'a' * 20_000}'\n")
    cut = repr("bash(" + "a" * (SHOWN_CHARS - 5))
    assert said == (
        f"<string>:2:3: rules.rule: {cut}... (20,005 characters): the pattern must end with ')'"
    )


def test_a_short_value_is_quoted_whole() -> None:
    said = refused("rules:\n  rule: bash(ls\n")
    assert said == "<string>:2:3: rules.rule: 'bash(ls': the pattern must end with ')'"


def test_a_number_too_large_is_said_to_be_one() -> None:
    said = refused(f"x: {'9' * 5000}\n")
    cut = repr("9" * SHOWN_CHARS)
    assert said == (
        f"<string>:1:4: x: invalid YAML: {cut}... (5,000 characters) cannot be read as "
        "a number (a number too large)"
    )


def test_a_long_value_yaml_cannot_read_is_cut_in_the_readers_words_too() -> None:
    said = refused(f"x: !!int {'z' * 5000}\n")
    assert len(said) < 400 and "(5,000 characters) cannot be read as a number" in said


def test_a_long_unknown_model_name_is_cut() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text=f"model: {'a' * 20_000}\n")
    assert len(str(info.value)) < 400
