"""Prompt words on the command line that are not UTF-8 (``dsh run $'caf\\xe9'``) are
refused as such bytes on stdin are, naming the word: Python keeps each such byte as a
lone surrogate, which was sent to the model as ``caf\\udce9`` (core/src/dsh/_cli_prompt.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply

from dsh._cli_args import UsageError
from dsh._cli_prompt import prompt_text


def test_a_word_that_is_not_utf8_is_refused_before_anything_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, "run", "say", b"caf\xe9"],
        env=cli_env,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "dsh: error: run: the prompt's word 2 ('caf\ufffd') is not UTF-8 text "
        "(unexpected end of data at byte 3)\n"
    )
    assert server.bodies() == []


@pytest.mark.parametrize(
    ("word", "said"),
    [
        (
            os.fsdecode(b"\xffabc"),
            "word 2 ('\ufffdabc') is not UTF-8 text (invalid start byte at byte 0)",
        ),
        (
            os.fsdecode(b"x" * 100 + b"\xc3("),
            f"word 2 ('{'x' * 60}'... (102 characters)) is not UTF-8 text",
        ),
        # a surrogate no byte makes (from a program's own argv list): crashed fsencode
        ("a\ud800b", "word 2 ('a\ufffd\ufffd\ufffdb') is not UTF-8 text (it holds a lone"),
    ],
)
def test_the_word_is_named_and_shown_short(word: str, said: str) -> None:
    with pytest.raises(UsageError) as info:
        prompt_text(["fine", word, "-"])
    assert str(info.value).startswith(f"run: the prompt's {said}")


def test_utf8_words_are_kept() -> None:
    assert prompt_text(["café", "日本"]) == "café 日本"


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_system_prompt_that_is_not_utf8_is_refused(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, command: str
) -> None:
    """``-s $'\\xff'`` was sent as ``\\ufffd`` while a prompt word so is refused."""
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    words = ["hi"] if command == "run" else []
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, command, "-s", b"be \xff", *words],
        input=b"hi\n",
        env=cli_env,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"dsh: error: {command}: -s ('be \ufffd') is not UTF-8 text "
        "(invalid start byte at byte 3)\n"
    )
    assert server.bodies() == []


def ascii_locale(env: dict[str, str]) -> dict[str, str]:
    """A child whose locale encoding is ASCII (``LC_ALL=C`` with Python's UTF-8 mode
    off): each non-ASCII byte of its argv is a lone surrogate to Python."""
    return {**env, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}


@pytest.mark.parametrize("command", ["run", "chat"])
def test_utf8_words_are_sent_under_an_ascii_locale(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, command: str
) -> None:
    """The word's bytes are UTF-8: they are the text typed (a terminal that sends UTF-8
    under a C locale), not "a lone surrogate" to refuse."""
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    words = ["say", "café ✓".encode()] if command == "run" else []
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, command, "-s", "sé ✓".encode(), *words],
        input="say café ✓\n".encode(),
        env=ascii_locale(cli_env),
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    (body,) = server.bodies()
    assert body["messages"][0] == {"role": "system", "content": "sé ✓"}
    assert body["messages"][-1]["content"] == "say café ✓"


def test_a_word_that_is_not_utf8_is_refused_under_an_ascii_locale_too(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, "run", "say", b"caf\xe9"],
        env=ascii_locale(cli_env),
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "dsh: error: run: the prompt's word 2 ('caf\\ufffd') is not UTF-8 text "
        "(unexpected end of data at byte 3)\n"
    )
    assert server.bodies() == []
