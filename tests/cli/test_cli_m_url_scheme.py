"""``-m provider:model@URL`` with a URL written without its scheme (``x@127.0.0.1:8080/v1``):
only an ``@`` followed by http:// or https:// starts the base URL, so the model name was
``x@127.0.0.1:8080/v1`` and dsh said the URL was missing, suggesting ``...@URL`` after it
(core/src/dsh/llm/choose.py _register). It now says what is wrong with the text after @."""

from __future__ import annotations

import pytest

from dsh.cli import main


def test_a_url_without_its_scheme_is_said_to_be_no_url(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["-m", "openai-compatible:x@127.0.0.1:8080/v1", "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert "'127.0.0.1:8080/v1' (after the @) is not an http:// or https:// URL" in err
    assert "-m openai-compatible:x@http://127.0.0.1:8080/v1" in err
    assert "/v1@URL" not in err


def test_a_missing_url_is_still_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m", "openai-compatible:x", "run", "hi"]) == 2
    assert "give it after an @: -m openai-compatible:x@URL" in capsys.readouterr().err
