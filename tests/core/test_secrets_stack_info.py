"""``HideKeys`` hides the keys in a record's ``stack_info`` too (``log.warning(...,
stack_info=True)`` prints the stack: each frame's source line, which may hold a key
written in a script)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

import dsh
from dsh._secrets import key_from_env

KEY = "sk-test-Qe4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Zx2Cv4Bn6Mm8"


def test_a_key_in_the_stack_of_a_record_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_TEST_STACK_KEY", KEY)
    key_from_env("DSH_TEST_STACK_KEY")  # as a model with this api_key_env does
    log = dsh.get_logger("dsh.test_stack_info")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    log.addHandler(handler)

    def connect(api_key: str) -> None:
        log.warning("connecting", stack_info=True)

    script = tmp_path / "script.py"  # a script with the key written in it
    script.write_text(f"connect(api_key={KEY!r})\n")
    try:
        exec(compile(script.read_text(), str(script), "exec"), {"connect": connect})
    finally:
        log.removeHandler(handler)

    shown = out.getvalue()
    assert "connecting" in shown and "Stack (most recent call last)" in shown
    assert str(script) in shown  # the script's frame is in the stack...
    assert "connect(api_key='***')" in shown  # ...with the key hidden
    assert KEY[:8] + KEY[8:16] not in shown
