"""``headers:`` of an entry of ``models:`` is checked when dsh.yml is loaded (by ``dsh
config check`` too), not found wrong by every request (TRANSPORT/UNKNOWN): a name that is
no HTTP header name, a value with a line break or a character that is not ASCII, and the
header that carries the key of ``api_key_env`` set a second time
(core/src/dsh/_config_models.py ModelConfig._are_headers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh

from dsh.config import load_config
from dsh.errors import ConfigError

ENTRY = "models:\n  m:\n    provider: {provider}\n    model: x\n{key}    headers: {headers}\n"
KEYED = "    api_key_env: MY_KEY\n"


def refused(headers: str, provider: str = "openai-compatible", key: str = KEYED) -> ConfigError:
    text = ENTRY.format(provider=provider, key=key, headers=headers)
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    return caught.value


@pytest.mark.parametrize(
    ("headers", "key", "why"),
    [
        ("{'bad name': x}", '["bad name"]', "is not an HTTP header name (letters, digits and -"),
        ("{'X-A:': x}", '["X-A:"]', "is not an HTTP header name"),
        ("{'': x}", '[""]', "is not an HTTP header name"),
        ('{X-A: "a\\nb"}', ".X-A", "must not hold a line break"),
        ('{X-A: "a\\rb"}', ".X-A", "must not hold a line break"),
        ("{X-A: café}", ".X-A", "must be ASCII text"),
        ('{X-A: "a\\x00b"}', ".X-A", "must be ASCII text"),
    ],
)
def test_a_bad_header_is_refused_naming_its_line_and_key(headers: str, key: str, why: str) -> None:
    error = refused(headers)
    assert error.source == "<string>:6:15"  # the header's key
    assert error.path == f"models.m.headers{key}"
    assert why in error.reason


@pytest.mark.parametrize(
    ("provider", "header"),
    [
        ("openai-compatible", "Authorization"),
        ("openai", "authorization"),
        ("deepseek", "AUTHORIZATION"),
        ("anthropic", "X-Api-Key"),
    ],
)
def test_the_header_of_the_key_is_refused_with_api_key_env(provider: str, header: str) -> None:
    error = refused(f"{{{header}: 'Bearer other'}}", provider)
    assert error.path == f"models.m.headers.{header}"
    assert "carries the key of api_key_env" in error.reason


def test_the_header_of_the_key_is_refused_for_a_providers_own_endpoint() -> None:
    """provider: openai without api_key_env sends $OPENAI_API_KEY to api.openai.com."""
    error = refused("{Authorization: 'Bearer other'}", "openai", key="")
    assert error.path == "models.m.headers.Authorization"


@pytest.mark.parametrize(
    "text",
    [
        # no key to send: the header is the only authorization
        ENTRY.format(provider="openai-compatible", key="", headers="{Authorization: Bearer t}"),
        # the key goes in another header
        ENTRY.format(
            provider="openai-compatible",
            key=KEYED + "    api_key_header: api-key\n",
            headers="{Authorization: Bearer t}",
        ),
        # x-api-key is not the key's header of an OpenAI-compatible provider
        ENTRY.format(provider="openai", key=KEYED, headers="{x-api-key: t}"),
        ENTRY.format(
            provider="openai", key=KEYED, headers="{X-Title: 'my app\tv1', HTTP-Referer: x}"
        ),
    ],
    ids=["no-key", "other-key-header", "not-the-key-header", "fine"],
)
def test_good_headers_load(text: str) -> None:
    assert load_config(text=text).models["m"].headers


def test_config_check_reports_a_bad_header(cli_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "dsh.yml"
    config.write_text(
        ENTRY.format(provider="openai-compatible", key=KEYED, headers='{X-A: "a\\nb"}')
    )
    done = dsh("config", "check", env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert done.returncode == 1
    assert f"{config}:6:15: models.m.headers.X-A: must not hold a line break" in done.stderr
