"""``repr(config)`` hides a value under a secret's name in a plugin's settings (a field
``token: str``, not typed ``SecretStr``) whatever its length, as the agents' options
and the options stored with a session hide one (``dsh._config_secrets.named_secret``):
in its fields, the mappings and lists they hold, and its nested models. A number is no
secret by that rule (``cache_key: 3``), so it is shown, in both.

Before: such a value was found by searching the repr's text, which only values of
``MIN_LENGTH`` characters or more are (a shorter one would hide other text):
``token: abc`` in a plugin's section was shown."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, SecretStr

from dsh.config import load_config


class _Auth(BaseModel):
    password: str = ""
    user: str = ""


class _Gateway(BaseModel):
    token: str = ""
    hosts: list[dict[str, str]] = []
    auth: _Auth = _Auth()
    api_key: SecretStr = SecretStr("")
    cache_key: int = 0
    name: str = ""


@pytest.mark.parametrize("short", ["abc", "x", "pw-1234"])
def test_a_short_value_under_a_secrets_name_in_a_section_is_hidden(short: str) -> None:
    text = (
        f"gw:\n  token: {short}\n  hosts: [{{name: h1, token: {short}}}]\n"
        f"  auth: {{password: {short}, user: bob}}\n  cache_key: 3\n  name: gw1\n"
    )
    config = load_config(text=text, settings={"gw": _Gateway})
    section = config.sections["gw"]
    assert (section.token, section.auth.password) == (short, short)  # kept as written
    made = repr(config)
    assert f"'{short}'" not in made
    assert "token='***'" in made
    assert "hosts=[{'name': 'h1', 'token': '***'}]" in made
    assert "auth=_Auth(password='***', user='bob')" in made
    assert "cache_key=3" in made and "name='gw1'" in made  # no secret: shown


class _Pool(BaseModel):
    servers: list[_Auth] = []
    by_name: dict[str, _Auth] = {}


def test_a_short_value_in_a_model_inside_a_list_or_a_mapping_is_hidden() -> None:
    """A section's models held by a list or a mapping (``servers: list[Server]``) are
    hidden in as its own nested models are."""
    text = (
        "pool:\n  servers: [{user: a, password: pw1}]\n  by_name: {b: {user: b, password: pw2}}\n"
    )
    config = load_config(text=text, settings={"pool": _Pool})
    assert config.sections["pool"].servers[0].password == "pw1"  # kept as written
    made = repr(config)
    assert "pw1" not in made and "pw2" not in made
    assert "servers=[_Auth(password='***', user='a')]" in made
    assert "by_name={'b': _Auth(password='***', user='b')}" in made
