"""What dsh chat says of a line the terminal cut at 4095 bytes
(core/src/dsh/_cli_terminal.py): install the line editor when prompt_toolkit is not
installed, turn it on when it is (it always said to install it)."""

from __future__ import annotations

import importlib.util

import pytest

from dsh._cli_terminal import _cut_note


def test_the_editor_not_installed_is_to_be_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None)
    assert "or install the line editor: pip install 'dsh-core[chat]')" in _cut_note()


def test_the_editor_installed_is_to_be_turned_on() -> None:
    pytest.importorskip("prompt_toolkit")
    note = _cut_note()
    assert "pip install" not in note
    assert "or turn the line editor on: it is off when DSH_CHAT_EDITOR is 0 or off" in note
