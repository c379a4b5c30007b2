"""Two secrets that share a long stretch (``COOKIESECRET0123456789`` and
``HDRSECRET0123456789xyz``: a run of 16 characters that ends the first) are both hidden
whole: ``redact`` finds the runs of every secret in the text as it was, then hides them
all, as the streaming redactor does.

Before: each secret was hidden in turn in the text the previous ones left, so once a run
of the first was hidden inside the second, the second no longer matched and its ends
showed (``X-Authentication: HDR***xyz``)."""

from __future__ import annotations

import pytest

from dsh._secrets import longest_first, redact

COOKIE = "COOKIESECRET0123456789"
TOKEN = "HDRSECRET0123456789xyz"


@pytest.mark.parametrize("order", [(COOKIE, TOKEN), (TOKEN, COOKIE)])
def test_secrets_sharing_a_stretch_are_both_hidden_whole(order: tuple[str, str]) -> None:
    text = f"Cookie: {COOKIE}\nX-Authentication: {TOKEN}\n"
    assert redact(text, order) == "Cookie: ***\nX-Authentication: ***\n"
    assert redact(text, longest_first(order)) == "Cookie: ***\nX-Authentication: ***\n"
