"""The prompt a ``--continue`` hint repeats for the user to paste (``dsh run --session
ID -- PROMPT``) is ``PROMPT`` when the hint could not show it as given: a key in it was
hidden (``***``, pasted it would be run as is) or a backtick in it would end the hint's
`...` (review rerev-cli, finding 4)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from dsh._cli_continue import _prompt_words

KEY = "sk-proj-0123456789abcdefghij"


def _args(prompt: str, tmp_path: Path) -> argparse.Namespace:
    return argparse.Namespace(command="run", prompt=prompt, cwd=tmp_path, config=None, model=None)


def test_a_prompt_holding_a_key_is_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert _prompt_words(_args(f"use {KEY} to deploy", tmp_path)) == ("PROMPT",)


def test_a_prompt_with_a_backtick_is_a_placeholder(tmp_path: Path) -> None:
    assert _prompt_words(_args("run `make` again", tmp_path)) == ("PROMPT",)


def test_a_plain_prompt_is_repeated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert _prompt_words(_args("go on, it's fine", tmp_path)) == ("--", "go on, it's fine")
