"""A value an error quotes cut to 60 characters (``dsh._quoted.shown``) has the
keys dsh knows hidden before it is cut: cut first, it kept a piece of a key shorter
than half of it, which ``redact`` (and so the ``dsh`` command) no longer recognises.
So for a name in ``dsh.yml`` that is one of its own models' keys, and for a prompt word
that is not UTF-8 (core/src/dsh/_cli_prompt.py)."""

from __future__ import annotations

import os
import random
import string

import pytest
from pydantic import BaseModel, field_validator

from dsh._cli_args import UsageError
from dsh._cli_prompt import prompt_text
from dsh._quoted import shown
from dsh.config import ConfigError, load_config


def _key(prefix: str, seed: int, length: int) -> str:
    """A key as long as a real one (an Anthropic key: 108 characters), never seen by
    another test of this process (keys dsh read are remembered process-wide)."""
    chars = string.ascii_letters + string.digits + "-_"
    rng = random.Random(seed)
    return prefix + "".join(rng.choice(chars) for _ in range(length - len(prefix)))


def _hidden(text: str, key: str) -> None:
    for piece in (key[:20], key[20:40], key[-20:]):
        assert piece not in text, text


def test_a_known_key_in_a_long_value_is_hidden_before_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = _key("sk-ant-api03-", 301, 108)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    said = shown(f"x-api-key: {key}")
    assert said == "'x-api-key: ***'"  # short now: whole
    assert shown(f"{key}{'a' * 70}") == f"{'***' + 'a' * 57!r}... (178 characters)"
    other = _key("gw-", 304, 100)  # one that is given
    assert shown(f"k {other}", [other]) == "'k ***'"
    assert shown("a" * 61) == f"{'a' * 60!r}... (61 characters)"  # no key: as before


def test_a_models_key_named_as_an_agents_model_is_hidden_before_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The key of ``api_key_env`` is none dsh has read yet: the config names it."""
    key = _key("ya29.", 302, 205)
    monkeypatch.setenv("LONG_KEY", key)
    text = (
        "models:\n  a: {provider: openai-compatible, model: m, base_url: "
        f"'http://127.0.0.1:9/v1', api_key_env: LONG_KEY}}\nagents:\n  - id: main\n"
        f"    model: '{key}'\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(text=text)
    # a key-like name is not quoted at all (test_config_model_key.py)
    assert "agents[0].model: unknown model (the name given looks like an API key" in str(info.value)
    _hidden(str(info.value), key)


def test_a_prompt_word_that_is_not_utf8_has_a_known_key_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = _key("sk-ant-api03-", 303, 108)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with pytest.raises(UsageError) as info:
        prompt_text([f"x-api-key: {key}" + os.fsdecode(b"\xff")])
    assert "word 1 ('x-api-key: ***\ufffd') is not UTF-8" in str(info.value)
    _hidden(str(info.value), key)


class _Rules(BaseModel):
    """A plugin's settings whose validator quotes the value it refuses."""

    rule: str

    @field_validator("rule")
    @classmethod
    def _closed(cls, value: str) -> str:
        if not value.endswith(")"):
            raise ValueError(f"{value!r}: the pattern must end with ')'")
        return value


def test_a_models_key_in_a_plugins_refused_value_is_hidden_before_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plugin's section is checked before the models' keys are read: the file's own
    keys are known first, so a refused value quoting one is cut with it hidden."""
    key = _key("gw-", 305, 100)
    monkeypatch.setenv("OWN_KEY", key)
    text = (
        "models:\n  a: {provider: openai-compatible, model: m, base_url: "
        f"'http://127.0.0.1:9/v1', api_key_env: OWN_KEY}}\n"
        f"rules:\n  rule: 'bash(xxxxx {key})x'\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(text=text, settings={"rules": _Rules})
    said = str(info.value)
    assert "rules.rule: 'bash(xxxxx ***)x': the pattern must end with ')'" in said
    _hidden(said, key)
