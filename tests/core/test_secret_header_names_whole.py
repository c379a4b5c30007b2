"""The names of HTTP headers that carry credentials (``Authorization``,
``Proxy-Authorization``, ``X-Authentication``, ``Cookie``, ``cookies``) are secrets'
as whole names only, and an option named ``cookie``/``cookies`` only when its value
looks like a credential: ``authentication: oauth``, ``require_authorization: ask``,
``accept_cookies: all``, ``cookie: session.txt`` are an agent's ordinary options.

Before: ``authorization``, ``authentication``, ``cookie`` and ``cookies`` ended a
secret's name, and each of those options was refused by ``dsh config check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh._secrets import is_secret_name
from dsh.config import load_config
from dsh.errors import ConfigError

TOKEN = "abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    ("name", "value"),
    [("authentication", "oauth"), ("require_authorization", "ask"),
     ("accept_cookies", "all"), ("cookie", "session.txt"), ("cookies", "cookies.txt"),
     ("authentication_method", "oauth"), ("send_cookies", "never")],
)  # fmt: skip
def test_an_option_named_like_a_header_with_a_mode_or_a_file_is_accepted(
    name: str, value: str, tmp_path: Path
) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text(f"agents:\n  - id: main\n    options:\n      {name}: {value}\n")
    config = load_config(path)
    assert config.agents[0].options[name] == value


@pytest.mark.parametrize(
    ("name", "value"),
    [("Authorization", f"Bearer {TOKEN}"), ("proxy_authorization", "short"),
     ("X-Authentication", "short"), ("Cookie", "sid=abc"), ("cookies", TOKEN),
     ("cookie", f"Bearer {TOKEN}")],
)  # fmt: skip
def test_a_header_s_name_with_a_credential_is_refused(
    name: str, value: str, tmp_path: Path
) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text(f"agents:\n  - id: main\n    options:\n      {name}: '{value}'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "names a secret" in caught.value.reason and value not in str(caught.value)


@pytest.mark.parametrize("name", ["Authorization", "proxy-authorization", "Cookie", "cookies"])
def test_a_header_s_name_is_a_secret_s_in_a_query(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["require_authorization", "accept_cookies", "authentication"])
def test_a_name_ending_as_a_header_s_is_not_a_secret_s(name: str) -> None:
    assert not is_secret_name(name) and not is_secret_name(name, query=False)
