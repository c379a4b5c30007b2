"""``repr()`` and ``str()`` of a model's settings (``ModelConfig``) and of the whole
config (``Config``) hide what ``HttpModel``'s repr hides: a credential written into
``headers:`` (after its scheme: ``Bearer ***``, whatever its length) and the value of a
secret-named parameter of ``base_url``'s query (``?api-key=***``). ``Config``'s repr
leaves out ``raw`` (the file as written, which repeats them) and hides the values the
plugins' settings declare secret. The field names and the other values stay.

Before: both were pydantic's and dataclasses' plain reprs: ``model.config`` and
``harness.config`` printed the keys (an assertion's diff, a ``print(config)``, a
plugin's ``%r`` log call before the model was built)."""

from __future__ import annotations

from pydantic import BaseModel, SecretStr

from dsh.config import ModelConfig, load_config
from dsh.llm.openai import OpenAICompatibleModel

QUERY = "sk-QUERYSECRET123456"
HEADER = "sk-HEADERSECRET12345"
SHORT = "abc12"  # a short token: hidden in a repr all the same
TOKEN = "Zq9Xw2Lr7Tb4Ym8K"  # token-like: a credential under any header name
SETTING = "plugin-SETTINGSECRET-99"
SECRETS = (QUERY, HEADER, SHORT, TOKEN, SETTING)
URL = f"http://h:8080/v1?api-version=2024-10-21&api-key={QUERY}"
HEADERS = {
    "Authorization": f"Bearer {HEADER}",
    "X-Gateway-Token": f"Token {SHORT}",
    "X-Upstream": TOKEN,
    "X-Title": "dsh tests",
}


def shown(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_a_model_configs_repr_and_str_hide_its_keys() -> None:
    config = ModelConfig(provider="openai-compatible", model="m", base_url=URL, headers=HEADERS)
    for text in (repr(config), str(config)):
        shown(text)
        assert "api-version=2024-10-21&api-key=***" in text
        assert "'Authorization': 'Bearer ***'" in text
        assert "'X-Gateway-Token': 'Token ***'" in text
        assert "'X-Upstream': '***'" in text
        assert "'X-Title': 'dsh tests'" in text  # not a credential: shown
        assert "provider='openai-compatible'" in text
        assert "model='m'" in text
    assert repr(config).startswith("ModelConfig(provider='openai-compatible', model='m', ")
    assert config.headers == HEADERS  # the settings themselves are untouched
    assert config.base_url == URL


def test_the_model_built_from_it_shows_no_key_in_its_config() -> None:
    config = ModelConfig(provider="openai-compatible", model="m", base_url=URL, headers=HEADERS)
    model = OpenAICompatibleModel("wire", config)
    shown(repr(model))
    shown(repr(model.config))


class Settings(BaseModel):
    token: SecretStr
    level: int = 1


def test_a_configs_repr_hides_the_keys_of_its_models_and_plugins() -> None:
    text = (
        f'models:\n  fast:\n    provider: openai-compatible\n    base_url: "{URL}"\n'
        f"    headers:\n"
        + "".join(f'      {name}: "{value}"\n' for name, value in HEADERS.items())
        + f"model: fast\nmyplug:\n  token: {SETTING}\n  level: 3\n"
    )
    config = load_config(text=text, settings={"myplug": Settings})
    assert SETTING in str(config.raw)  # the file as written holds them all
    for made in (repr(config), str(config)):
        shown(made)
        assert "models={'fast': ModelConfig(provider='openai-compatible'" in made
        assert "default_model='fast'" in made
        assert "level=3" in made
        assert "raw=" not in made


def test_a_plugins_declared_secret_in_an_agents_options_is_hidden() -> None:
    text = (
        "models:\n  fast: {provider: openai-compatible, base_url: 'http://h/v1'}\n"
        f"model: fast\nagents:\n  - id: main\n    options:\n      myplug: {{token: {SETTING}}}\n"
    )
    config = load_config(text=text, settings={"myplug": Settings})
    assert config.agents[0].options == {"myplug": {"token": SETTING}}  # as written
    shown(repr(config))
    shown(repr(config.agents))
    assert "AgentConfig(id='main'" in repr(config)
