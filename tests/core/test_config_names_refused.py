"""Names and URLs refused up front, found by the bad-input fuzz review: a ``base_url``
urllib splits but httpx, which sends the requests, refuses (a zero-width space pasted
into the host, a control character in the path) was accepted by the config's check
and raised httpx's ``InvalidURL`` as a traceback from every command, as a
``DSH_CONFIG`` or ``--cwd`` name too long for the system did; a URL with no host was
said to hold a space; an empty ``--cwd`` was the current directory and an empty ``-p``
a plugin looked for."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from dsh.config import find_config, load_config
from dsh.errors import ConfigError
from dsh.llm.providers import parse_model_shorthand


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://api.example\u200b.com/v1", "Invalid IDNA hostname"),
        ("http://gw.example/\x7f", "Invalid non-printable ASCII character in URL"),
        ("http://[::1]x/v1", "Invalid port: 'x'"),
    ],
)
def test_a_url_httpx_cannot_send_to_is_refused_at_its_key(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(
            text=f"models:\n  gw: {{provider: openai, base_url: {url!r}}}\n".replace("'", '"')
        )
    assert caught.value.path == "models.gw.base_url"
    assert caught.value.reason.startswith(f"is not a valid URL ({why}")
    with pytest.raises(ConfigError) as shorthand:
        parse_model_shorthand(f"openai:gpt@{url}")
    assert "base_url: is not a valid URL" in str(shorthand.value)


def test_a_shorthand_url_with_no_host_says_so() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand("openai:gpt@http://")
    assert "must be an http:// or https:// URL with a host, no spaces" in str(caught.value)


def test_a_dsh_config_name_too_long_is_refused_naming_the_variable(tmp_path: Path) -> None:
    """``Path.is_dir`` raises for ENAMETOOLONG (a traceback from every command)."""
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={"DSH_CONFIG": "a" * 300})
    assert caught.value.source == f"DSH_CONFIG={'a' * 300}"
    assert caught.value.reason.endswith("cannot be read: File name too long")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("", "dsh: error: argument --cwd: the directory name is empty"),
        ("a" * 300, "cannot be read (File name too long); give the directory to work in"),
        ("nosuch", "--cwd 'nosuch': does not exist; give the directory to work in"),
    ],
)
def test_a_cwd_that_names_no_directory_is_refused(
    given: str, said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty ``--cwd`` was the current directory, silently; a name too long a
    traceback."""
    from dsh.cli import main

    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    with pytest.raises(SystemExit) if not given else contextlib.nullcontext():
        assert main(["--cwd", given, "models"]) == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("given", ["", "no:", " "])
def test_an_empty_plugin_name_is_refused(given: str, capsys: pytest.CaptureFixture[str]) -> None:
    """It was looked for: ``no plugin named  (from -p ) is installed``."""
    from dsh.cli import main

    with pytest.raises(SystemExit):
        main(["-p", given, "models"])
    assert "dsh: error: argument -p: the plugin name is empty" in capsys.readouterr().err


def test_a_plain_base_url_is_checked_without_importing_httpx() -> None:
    """httpx is imported for the requests, not for reading dsh.yml (``dsh sessions
    list`` read a dsh.yml with a base_url and imported it: the merged review)."""
    import subprocess
    import sys

    code = (
        "import sys; from dsh.config import load_config; "
        "load_config(text='models:\\n  g: {provider: openai, base_url: \"http://h:8/v1\"}\\n'); "
        "print('httpx' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n", done.stderr


async def test_a_plugins_path_setting_given_a_number_is_refused_in_yamls_words() -> None:
    """pydantic's own words named a class (``Input is not a valid path for <class
    'pathlib.Path'>``); any plugin's ``Path`` field is told in YAML's, as a string is."""
    from pydantic import BaseModel

    from dsh import hookimpl
    from dsh.testing import ScriptedModel, scripted_harness

    class Where(BaseModel):
        directory: Path | None = None

    class Plugin:
        @hookimpl
        def register_settings(self, register: object) -> None:
            register(Where)  # type: ignore[operator]

    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            ScriptedModel([]), plugins=[("where", Plugin())], config_text="where:\n  directory: 5\n"
        ):
            pass
    assert caught.value.reason == "Input should be a string (a path), not a number"
