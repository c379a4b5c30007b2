"""A value under a secret's name (``token``, ``client_secret``) is a secret whatever its
type when it holds a string: a list of tokens, a mapping of them (``secret: {x: ...}``).
In an option no loaded plugin reads it is refused (naming the key's path, never the
value), in dsh.yml and in code, as a string there is. What holds no string (``cache_key:
3``, ``auth: {ttl: 3}``) is no secret; under a cookie's name a list of files' names
(``cookies: [cookies.txt]``) is none either, but a mapping of cookies is.

Before: only a string was a secret: ``token: [<key>]`` was accepted and stored with the
session as given. And a mapping at the top of an agent's options was taken for a
plugin's section, whose own keys only were looked at, even where no plugin took it:
``cookies: {session: abc}`` was accepted, shown by ``repr`` and stored as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh import DshError
from dsh.config import load_config
from dsh.errors import ConfigError
from dsh.testing import ScriptedModel, scripted_harness

KEY = "sk-LISTSECRET0123456789abcdef"

# (an agent's options as YAML, the refused key's path under them)
REFUSED = [
    ("{token: [KEY, other]}", "token"),
    ("{o: {token: [KEY]}}", "o.token"),
    ("{o: {client_secret: {x: KEY}}}", "o.client_secret"),
    ("{o: {hosts: [{password: [[KEY]]}]}}", "o.hosts[0].password"),
    ("{o: {cookies: {session: abc}}}", "o.cookies"),  # a jar: cookies by name
    ("{o: {cookies: [cookies.txt, KEY]}}", "o.cookies"),
    # a core option's typo at the top (max_token: refused as one); nested, no typo of
    # anything, only a secret's name (it was accepted, and hidden)
    ("{o: {hosts: [{max_token: KEY}]}}", "o.hosts[0].max_token"),
    # at the top: no plugin's section (none is loaded by that name), an option whole
    # when it holds cookies by name or a credential (``auth: {mode: sso}``: accepted)
    ("{cookies: {session: abc}}", "cookies"),
    ("{token: {x: KEY}}", "token"),
    ("{client_secret: [KEY]}", "client_secret"),
]
ACCEPTED = [
    "{cache_key: 3}",  # a number: no secret
    "{auth: {ttl: 3}}",  # a plugin's name maybe (a section): its keys are looked at
    "{o: {auth: {ttl: 3, retries: [1, 2]}}}",  # no string in it
    "{o: {cookies: [cookies.txt, jar.txt]}}",  # files' names
    "{o: {token: []}}",  # nothing in it
    "{o: {max_token: 4096}}",  # a number
]


@pytest.mark.parametrize(("options", "path"), REFUSED)
def test_a_value_holding_a_string_under_a_secrets_name_is_refused_in_dsh_yml(
    options: str, path: str, tmp_path: Path
) -> None:
    file = tmp_path / "dsh.yml"
    file.write_text(f"agents:\n  - id: main\n    options: {options.replace('KEY', KEY)}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    error = caught.value
    assert error.path == f"agents[0].options.{path}"
    assert "names a secret" in error.reason
    assert str(file) in str(error) and KEY not in str(error)


@pytest.mark.parametrize(("options", "path"), REFUSED)
async def test_a_value_holding_a_string_under_a_secrets_name_is_refused_in_code(
    options: str, path: str
) -> None:
    import yaml

    given = yaml.safe_load(options.replace("KEY", KEY))
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", **given})
    assert f"option {path}: " in str(caught.value) or f"option {path!r}: " in str(caught.value)
    assert "names a secret" in str(caught.value) and KEY not in str(caught.value)


@pytest.mark.parametrize("options", ACCEPTED)
def test_a_value_holding_no_secret_under_a_secrets_name_is_accepted(options: str) -> None:
    import yaml

    config = load_config(text=f"agents:\n  - id: main\n    options: {options}\n")
    assert config.agents[0].options == yaml.safe_load(options)
