"""A plugin's settings validator that quotes its input (``raise ValueError(f"bad token
{v}")``, an ``assert`` with a message, a model validator quoting the whole section):
the config error says ``***`` for a secret there, a ``SecretStr`` field's value (however
nested) or one under a key named as a secret's, in dsh.yml and in options given in
code; and the ``ValidationError`` is not chained (``dsh -v`` prints the cause) when its
words quote one.

Before: the reason was the validator's words, the secret in them whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from config_support import fails, write
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator, model_validator

from dsh import DshError, hookimpl
from dsh.config import add_settings
from dsh.testing import ScriptedModel, scripted_harness

KEY = "sk-VALIDATOR0123456789abcdefXYZ"


class Quotes(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)
    token: SecretStr | None = None
    keys: list[SecretStr] = []
    password: str = ""
    level: str = "quiet"

    @field_validator("token", "keys")
    @classmethod
    def _starts(cls, v: Any) -> Any:
        for item in v if isinstance(v, list) else [v]:
            secret = item.get_secret_value()
            if not secret.startswith("ok-"):  # an assert pytest would not rewrite
                raise AssertionError(f"{secret} must start with ok-")
        return v

    @field_validator("password", mode="before")
    @classmethod
    def _long(cls, v: str) -> str:
        raise ValueError(f"password {v!r} is too weak")

    @field_validator("level")
    @classmethod
    def _level(cls, v: str) -> str:
        raise ValueError(f"level {v!r} is unknown")


def _settings() -> dict[str, type[BaseModel]]:
    settings: dict[str, type[BaseModel]] = {}
    add_settings(settings, "quoting", Quotes)
    return settings


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (f"token: {KEY}", "token: Assertion failed, *** must start with ok-"),
        (f"keys: [ok-1234, {KEY}]", "keys: Assertion failed, *** must start with ok-"),
        (f"password: {KEY}", "password: password '***' is too weak"),
    ],
)
@pytest.mark.parametrize("where", ["section", "options"])
def test_a_secret_a_validator_quotes_is_hidden(
    tmp_path: Path, given: str, said: str, where: str
) -> None:
    if where == "section":
        text = f"quoting: {{{given}}}\n"
    else:
        text = f"agents:\n  - id: a\n    options:\n      quoting: {{{given}}}\n"
    err = fails(write(tmp_path, text), _settings())
    assert KEY not in str(err) and KEY[:12] not in str(err)
    assert str(err).endswith(said), str(err)
    assert err.__cause__ is None  # its words quote the secret


def test_a_value_no_secret_is_still_quoted(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "quoting: {level: loud}\n"), _settings())
    assert err.reason == "level 'loud' is unknown"


class Whole(BaseModel):
    model_config = ConfigDict(hide_input_in_errors=True)
    token: SecretStr | None = None
    level: str = "quiet"

    @model_validator(mode="before")
    @classmethod
    def _all(cls, v: Any) -> Any:
        raise ValueError(f"bad settings {v}")


def test_a_model_validator_quoting_the_section_hides_its_secrets(tmp_path: Path) -> None:
    settings: dict[str, type[BaseModel]] = {}
    add_settings(settings, "whole", Whole)
    err = fails(write(tmp_path, f"whole: {{token: {KEY}, level: loud}}\n"), settings)
    assert err.reason == "bad settings {'token': '***', 'level': 'loud'}"
    assert err.__cause__ is None


class _Quoting:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Quotes)


async def test_options_in_code_hide_a_secret_a_validator_quotes() -> None:
    async with scripted_harness(ScriptedModel([]), plugins=[("quoting", _Quoting())]) as h:
        options = {"model": "scripted", "quoting": {"token": SecretStr(KEY)}}
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options=options)
    assert "option quoting.token: Assertion failed, *** must start with ok-" in str(caught.value)
    assert KEY not in str(caught.value)
