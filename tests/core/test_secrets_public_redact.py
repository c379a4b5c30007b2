"""``dsh.redact``: the keys ``HideKeys`` hides from log records, hidden in any text a
plugin writes elsewhere (docs/writing-plugins.md, "Log with dsh.get_logger")."""

from __future__ import annotations

import pytest

import dsh
from dsh._secrets import key_from_env

KEY = "sk-proxy-9fQ2wL7xR4tZ8mB1nC6vD3kH5jP0sG2a"


def test_redact_hides_a_key_dsh_read_and_leaves_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_TEST_REDACT_KEY", KEY)
    text = f"refused: Bearer {KEY} (cut: {KEY[:24]})"
    assert dsh.redact(text) == text  # not read yet: not known to dsh
    key_from_env("DSH_TEST_REDACT_KEY")

    assert dsh.redact(text) == "refused: Bearer *** (cut: ***)"
    assert dsh.redact("nothing secret here") == "nothing secret here"


def test_redact_hides_a_built_in_providers_key_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-ant-Zu8Ye3Xw1Vt6Us4Rq9Po2Nm7Lk5Ji0Hg"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    assert dsh.redact(f"x-api-key: {key}") == "x-api-key: ***"


def test_redact_is_public() -> None:
    assert "redact" in dsh.__all__
    assert "redact" in dir(dsh)
