"""What the reprs of the settings hide, after a re-review of ``Config``'s repr:

- an unset optional secret (``SecretStr("")``) made every character boundary of
  ``repr(config)`` ``***``, and a declared secret shorter than dsh hides elsewhere
  (``MIN_LENGTH``: ``token: fast``) hid the model's name; now such values are not
  searched for: an agent's option equal to one is hidden whole, nothing else;
- a declared secret holding a backslash was searched for in the repr, where it is
  escaped (``p\\\\ssw0rd``), and shown; the options are hidden before their repr;
- ``repr(config.agents)`` showed a plugin's declared secret in an agent's options
  (pytest's diff of two ``Config``s drills into the differing field, printing its own
  repr), and ``raw`` took part in ``Config``'s equality, so a diff printed the file
  as written, keys and all: ``raw`` is left out of equality now;
- ``ModelConfig(...)`` built in code with a bad value quoted it in pydantic's error
  (``input_value=``), a key in ``base_url``'s query or ``headers`` with it;
- a credential shorter than its header's scheme garbled it (``Bear*** ***``).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from dsh.config import AgentConfig, Config, ModelConfig, load_config

LONG = "sk-AAAASETTINGSECRET1"
MODELS = (
    "models:\n  fast: {provider: openai-compatible, base_url: 'http://h:8080/v1'}\nmodel: fast\n"
)


class Optional(BaseModel):
    token: SecretStr = SecretStr("")  # an optional token, unset
    level: int = 1


class Settings(BaseModel):
    token: SecretStr
    level: int = 1


def with_token(token: str, *, level: int = 3) -> Config:
    written = json.dumps(token)  # YAML reads a JSON string as it is
    text = MODELS + f"myplug:\n  token: {written}\n  level: {level}\n"
    text += f"agents:\n  - id: main\n    options:\n      myplug: {{token: {written}}}\n"
    return load_config(text=text, settings={"myplug": Settings})


def test_an_unset_optional_secret_leaves_the_repr_readable() -> None:
    config = load_config(text=MODELS + "myplug:\n  level: 3\n", settings={"myplug": Optional})
    made = repr(config)
    assert made.startswith("Config(source='<string>', models={'fast': ModelConfig(")
    assert "***C" not in made


@pytest.mark.parametrize("token", ["fast", "1", "abc12"])
def test_a_short_declared_secret_hides_no_other_text(token: str) -> None:
    config = with_token(token)
    made = repr(config)
    assert "models={'fast': ModelConfig(provider='openai-compatible', model='fast'" in made
    assert "default_model='fast'" in made
    assert "options={'myplug': {'token': '***'}}" in made  # the option itself: whole


@pytest.mark.parametrize("token", [LONG, "p\\ssw0rd", "pa\\ss-SETTING-77", 'it\'s "quoted" 12'])
def test_a_declared_secret_in_an_agents_options_is_hidden_in_both_reprs(token: str) -> None:
    config = with_token(token)
    for made in (repr(config), repr(config.agents), str(config.agents[0])):
        assert "'token': '***'" in made
        for piece in (token, repr(token)[1:-1], "ssw0rd", "SETTING"):
            assert piece not in made
    assert config.agents[0].options == {"myplug": {"token": token}}  # kept as written


def test_a_secret_inside_a_longer_option_value_is_hidden_there() -> None:
    config = with_token(LONG)
    agent = config.agents[0].model_copy(update={"options": {"other": f"Bearer {LONG} x"}})
    made = repr(dataclasses.replace(config, agents=[agent]))
    assert "'other': 'Bearer *** x'" in made


def test_configs_differing_only_in_raw_are_equal() -> None:
    config = with_token(LONG)
    assert dataclasses.replace(config, raw={}) == config
    assert with_token(LONG, level=3) != with_token(LONG, level=4)  # the sections differ


def test_a_model_config_built_in_code_quotes_no_bad_value() -> None:
    query = "sk-QUERYSECRET123456"
    header = "sk-HEADERSECRET12345"
    bad = [
        {"base_url": f"http://h:99999/v1?api-key={query}"},
        {"base_url": f"http://user:{query}@h/v1"},
        {"base_url": "http://h/v1", "headers": {"Bad Name": f"Bearer {header}"}},
        {"base_url": "http://h/v1", "headers": {"Authorization": f"Bearer {header}\n"}},
    ]
    for settings in bad:
        with pytest.raises(ValidationError) as caught:
            ModelConfig(provider="openai-compatible", **settings)  # type: ignore[arg-type]
        assert query not in str(caught.value)
        assert header not in str(caught.value)


def test_an_agent_config_built_in_code_quotes_no_bad_value() -> None:
    with pytest.raises(ValidationError) as caught:
        AgentConfig(id="main", options={"myplug": {"token": LONG}}, surplus=LONG)  # type: ignore[call-arg]
    assert LONG not in str(caught.value)


@pytest.mark.parametrize(
    ("value", "made"),
    [
        ("Bearer er", "Bearer ***"),
        ("Bearer Bearer", "Bearer ***"),
        ("Basic a", "Basic ***"),
        ("Token sk-HEADERSECRET12345", "Token ***"),
    ],
)
def test_a_short_header_credential_is_hidden_whole_after_its_scheme(value: str, made: str) -> None:
    config = ModelConfig(provider="openai-compatible", headers={"Authorization": value})
    assert f"'Authorization': '{made}'" in repr(config)


class Plain(BaseModel):
    """A plugin's settings whose secrets are typed ``str``."""

    password: str = ""
    hosts: list[dict[str, str]] = []
    level: str = "quiet"


def test_a_value_under_a_secrets_name_is_hidden_though_not_declared() -> None:
    """Only ``SecretStr`` values were hidden: ``password: str`` was shown in the
    section's repr and in the agents' options."""
    text = (
        f"plain: {{password: {LONG}, hosts: [{{name: h, token: {LONG}x}}], level: loud}}\n"
        f"agents:\n  - id: main\n    options: {{plain: {{password: {LONG}}}, note: abc}}\n"
    )
    config = load_config(text=text, settings={"plain": Plain})
    shown = repr(config) + repr(config.agents)
    assert LONG not in shown
    assert "password='***'" in shown and "'token': '***'" in shown
    assert "level='loud'" in shown and "'note': 'abc'" in shown
