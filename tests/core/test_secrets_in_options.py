"""An agent's options are stored with its session (its header: the session file, ``dsh
sessions show``), so a secret has no place there:

- an option named as a secret by the key-name rule (``openai_api_key``, ``apiKey``,
  ``gateway_token``), not only ``api_key``, is refused where options are checked: in
  dsh.yml (naming the file, the key's path and why, never the value) and in code;
- a value that holds a secret dsh holds (a model API key it read, a plugin's secret) is
  stored with ``***`` in its place, with a warning naming the option, not the key.

Before: both were accepted, and stored whole in the session's header."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dsh import DshError, hookimpl
from dsh.config import load_config
from dsh.errors import ConfigError
from dsh.testing import ScriptedModel, scripted_harness

KEY = "sk-OPTSECRET0123456789abcdef"


@pytest.mark.parametrize(
    "name", ["openai_api_key", "apiKey", "gateway_token", "client-secret", "db_password"]
)
def test_an_option_named_as_a_secret_is_refused_in_dsh_yml(name: str, tmp_path: Path) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text(f"agents:\n  - id: main\n    options:\n      {name}: {KEY}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert error.path == f"agents[0].options.{name}"
    assert "names a secret" in error.reason and "environment variable" in error.reason
    assert str(path) in str(error) and KEY not in str(error)


@pytest.mark.parametrize("name", ["note", "max_tokens", "tokenizer", "keyspace", "monkey"])
def test_an_option_not_named_as_a_secret_is_accepted(name: str) -> None:
    config = load_config(text=f"agents:\n  - id: main\n    options:\n      {name}: 5\n")
    assert config.agents[0].options == {name: 5}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("session", "notes"),  # names a secret in a URL's query only
        ("code", "review"),
        ("access", "read-only"),
        ("cache_key", 3),  # not a string: no secret
        ("auth", "{mode: sso, ttl: 3}"),  # a section (a plugin named auth)
    ],
)
def test_a_name_a_secret_may_have_is_accepted_where_no_secret_is(name: str, value: object) -> None:
    """The key-name rule of query parameters refused options and sections that hold no
    secret: a plugin named ``auth`` could not have its section."""
    text = f"{name}: {value}\nagents:\n  - id: main\n    options:\n      {name}: {value}\n"
    with pytest.raises(ConfigError) as caught:  # the top-level key: no plugin of that name
        load_config(text=text)
    assert "names a secret" not in str(caught.value)
    config = load_config(text=text.split("\n", 1)[1])
    assert name in config.agents[0].options


async def test_an_option_named_as_a_secret_is_refused_in_code() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", "apiKey": KEY})
    assert "option 'apiKey'" in str(caught.value) and "names a secret" in str(caught.value)
    assert KEY not in str(caught.value)


async def test_a_held_secret_in_an_options_value_is_stored_hidden(
    caplog: pytest.LogCaptureFixture,
) -> None:
    options = {"model": "scripted", "note": KEY, "gateway": {"hosts": [f"x?k={KEY}", "y"]}}
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        harness.add_secrets([KEY])
        with caplog.at_level(logging.WARNING):
            agent = await harness.agents.create("a", options=options, meta={"by": f"<{KEY}>"})
        stored = agent.session.meta
        assert agent.options["note"] == KEY  # the agent itself has it as given
    assert stored["options"] == {
        "model": "scripted",
        "note": "***",
        "gateway": {"hosts": ["x?k=***", "y"]},
    }
    assert stored["by"] == "<***>"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'note'" in line and "'gateway'" in line for line in warned), warned
    assert all(KEY not in line for line in warned)


def test_an_option_named_with_a_held_secret_is_warned_of_without_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning does not rely on the log records' filter (a secret of this harness
    only, such as one given to ``hidden_meta`` here, is not among the keys it hides)."""
    from dsh._stored_meta import hidden_meta

    fresh = f"fresh-{uuid.uuid4().hex}"
    with caplog.at_level(logging.WARNING):
        stored = hidden_meta("a", {"options": {fresh: 1}, f"x{fresh}": 2}, (fresh,))
    assert stored == {"options": {"***": 1}, "x***": 2}
    [warned] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "option '***', meta 'x***' held a secret" in warned
    assert fresh not in warned


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ("{gateway: {api_key: KEY}}", "gateway.api_key"),
        ("{deeper: {a: {b: [{x: 1}, {token: KEY}]}}}", "deeper.a.b[1].token"),
        ("{hosts: [{password: KEY}]}", "hosts[0].password"),
    ],
)
def test_a_secret_nested_in_a_free_option_is_refused_in_dsh_yml(
    options: str, path: str, tmp_path: Path
) -> None:
    """Only an option's own name was checked: a secret under a free option (one no
    loaded plugin reads) was stored with the session whole."""
    file = tmp_path / "dsh.yml"
    file.write_text(f"agents:\n  - id: main\n    options: {{o: {options.replace('KEY', KEY)}}}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    error = caught.value
    assert error.path == f"agents[0].options.o.{path}"
    assert str(file) in str(error) and KEY not in str(error)


def test_a_free_option_without_a_nested_secret_is_accepted() -> None:
    text = "agents:\n  - id: main\n    options: {o: {api_key_env: GW_KEY, tokens: [1], n: x}}\n"
    assert load_config(text=text).agents[0].options["o"]["api_key_env"] == "GW_KEY"


async def test_a_secret_nested_in_a_free_option_is_refused_in_code() -> None:
    looped: list[object] = [{"note": "x"}]
    looped.append(looped)  # a value that holds itself is walked once
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        agent = await harness.agents.create("b", options={"model": "scripted", "l": looped})
        assert agent.options["l"] is looped
        with pytest.raises(DshError) as caught:
            await harness.agents.create(
                "a", options={"model": "scripted", "gw": {"hosts": [{"client_secret": KEY}]}}
            )
    assert "option gw.hosts[0].client_secret: 'client_secret' names a secret" in str(caught.value)
    assert KEY not in str(caught.value)


class _Plain(BaseModel):
    """A plugin's settings whose secret is not typed ``SecretStr``."""

    token: str = ""
    hosts: list[dict[str, str]] = []


class _PlainPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(_Plain)


async def test_a_value_under_a_secrets_name_in_a_plugins_options_is_stored_hidden(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Its settings model accepts it, so it is not refused; it was stored whole."""
    given = {"token": KEY, "hosts": [{"name": "a", "api_key": KEY}]}
    plugins: list[Any] = [("plain", _PlainPlugin())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins) as harness:
        with caplog.at_level(logging.WARNING):
            options = {"model": "scripted", "plain": given}
            agent = await harness.agents.create("a", options=options, meta={"gw_token": KEY})
        assert agent.options["plain"] == given  # the agent itself has it as given
        stored = agent.session.meta
    assert stored["options"]["plain"] == {
        "token": "***",
        "hosts": [{"name": "a", "api_key": "***"}],
    }
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert stored["gw_token"] == "***"
    [said] = [line for line in warned if "held a value under a secret's name" in line]
    assert "option 'plain'" in said and "meta 'gw_token'" in said
    assert all(KEY not in line for line in warned)
