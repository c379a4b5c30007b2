"""A ``base_url`` that ``urllib`` cannot split (``http://[::1``: a bad IPv6 address) is
refused in one line by every command, not by ``config check`` alone: hiding the keys
from that line split the URL again and raised ValueError, a traceback instead of the
error (core/src/dsh/_secrets.py query_secrets)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh._secrets import query_secrets
from dsh.cli import main

SECRET = "sekrit-0123456789"


@pytest.mark.parametrize("argv", [["run", "hi"], ["run", "-m", "m", "hi"], ["models"]])
def test_a_url_that_cannot_be_split_is_refused_in_one_line(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"http://[::1/v1?api-key={SECRET}"
    (tmp_path / "dsh.yml").write_text(
        f'models:\n  m: {{provider: openai-compatible, base_url: "{url}"}}\n'
    )
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "dsh.yml:2:" in err and "models.m.base_url: is not a valid URL" in err
    assert "Traceback" not in err and SECRET not in err


@pytest.mark.parametrize(
    "url",
    [f"http://[::1?key={SECRET}", f"http://[::1/x?a=1&access_token={SECRET}#f", "http://]x["],
)
def test_the_secrets_of_a_url_that_cannot_be_split_are_still_found(url: str) -> None:
    found = query_secrets(url)
    assert (SECRET in found) == (SECRET in url)
