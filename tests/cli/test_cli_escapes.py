"""Text from dsh.yml and paths the command line shows: an escape sequence in a model's
name or a file name is shown as ``\\x1b``, never written to the terminal as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_support import dsh, text_reply

#: a model's name that would retitle the terminal it is shown in
NAME = "m\x1b]0;PWNED\x07"


def _config(directory: Path, url: str = "http://127.0.0.1:9/v1") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "dsh.yml"
    config.write_text(
        f'models:\n  "m\\e]0;PWNED\\a":\n    provider: openai-compatible\n'
        f"    model: x\n    base_url: {url}\n"
    )
    return config


def _shown(done: Any) -> str:
    both = done.stdout + done.stderr
    assert "\x1b" not in both and "\x07" not in both, both
    return str(both)


def test_names_and_paths_with_escapes_are_shown_escaped(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("hi there")])
    work = tmp_path / "w\x1b]0;PWNED\x07"
    _config(work, server.url)
    listed = dsh("models", env=cli_env, cwd=work)
    assert "m\\x1b]0;PWNED\\x07" in _shown(listed), listed.stderr
    unknown = dsh("-m", "nope", "run", "hi", env=cli_env, cwd=work)
    assert unknown.returncode == 2 and "m\\x1b]0;PWNED\\x07" in _shown(unknown)
    checked = dsh("config", "check", env=cli_env, cwd=work)
    assert checked.returncode == 0 and "w\\x1b]0;PWNED\\x07" in _shown(checked)
    missing = dsh("-c", str(work / "no\x1b[2J.yml"), "models", env=cli_env, cwd=tmp_path)
    assert missing.returncode != 0 and "no\\x1b[2J.yml" in _shown(missing)
    elsewhere = dsh("--cwd", str(work), "config", "check", env=cli_env, cwd=tmp_path)
    assert elsewhere.returncode == 0 and "w\\x1b]0;PWNED\\x07" in _shown(elsewhere)
    ran = dsh("-m", NAME, "run", "hi", env=cli_env, cwd=work)
    assert ran.returncode == 0 and "dsh: model m\\x1b]0;PWNED\\x07 (" in _shown(ran)


def test_chat_model_command_shows_the_name_escaped(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    _config(tmp_path, server.url)
    done = dsh("-m", NAME, "chat", env=cli_env, cwd=tmp_path, stdin="/model\n/model x\n")
    shown = _shown(done)
    assert "  m\\x1b]0;PWNED\\x07\n" in shown and "(m\\x1b]0;PWNED\\x07)" in shown
