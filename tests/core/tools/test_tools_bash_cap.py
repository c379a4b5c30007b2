"""bash's output cap and the agent's secrets: no piece of a secret the cut goes through
is shown, whatever bytes the secret holds (``redact`` hides only pieces of at least half
a secret, so the cap must leave out the shorter ones)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dsh._secrets import redact
from dsh.builtin_tools._bash import MAX_OUTPUT_BYTES, run_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash is POSIX")

HALF = MAX_OUTPUT_BYTES // 2
BANG = "Zq7Rk2Lm9Xw4Tv8Np3Hs!Ab5Cd6Ef7Gh8Ij9Kl0Mn"  # '!' 20 characters in
PASSWORD = "p@ssw0rd:Zq7Rk2Lm9Xw4Tv8Np3Hs1234567890"
PEM = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"


async def capped(tmp_path: Path, data: str, secrets: tuple[str, ...]) -> tuple[str, str]:
    """The head and the tail bash shows of ``data``, with ``secrets`` redacted."""
    (tmp_path / "out.txt").write_text(data)
    output, code, _ = await run_command("cat out.txt", tmp_path, 10, (), secrets)
    assert code == 0
    head, rest = redact(output, secrets).split("\n[... ")
    return head, rest.split("...]\n", 1)[1]


def shown_pieces(text: str, secret: str) -> list[str]:
    """The starts and ends of ``secret`` that ``text`` shows (two characters at least)."""
    pieces = [secret[:n] for n in range(2, len(secret))] + [
        secret[-n:] for n in range(2, len(secret))
    ]
    return [piece for piece in pieces if piece in text]


@pytest.mark.parametrize("secret", [BANG, PASSWORD, PEM])
@pytest.mark.parametrize("inside", [1, 9, 20, 21, 25])
async def test_no_piece_of_a_secret_the_head_cut_goes_through_is_shown(
    tmp_path: Path, secret: str, inside: int
) -> None:
    """The head ends ``inside`` characters into the secret, before or after a byte that
    is no word's ('!', '@', ':', a newline): the part before that byte was shown."""
    before = "x " * ((HALF - inside) // 2) + "x" * ((HALF - inside) % 2)
    head, tail = await capped(tmp_path, before + secret + " " + "y " * HALF, (secret,))
    assert shown_pieces(head, secret) == []
    assert head == before.rstrip("x") or head == before, head[-40:]
    assert set(tail) <= {"y", " "}


@pytest.mark.parametrize("secret", [BANG, PASSWORD, PEM])
@pytest.mark.parametrize("inside", [1, 9, 20, 21, 25])
async def test_no_piece_of_a_secret_the_tail_cut_goes_through_is_shown(
    tmp_path: Path, secret: str, inside: int
) -> None:
    """The tail starts ``inside`` characters before the secret ends."""
    after = "y " * ((HALF - inside) // 2) + "y" * ((HALF - inside) % 2)
    head, tail = await capped(tmp_path, "x " * HALF + secret + after, (secret,))
    assert shown_pieces(tail, secret) == []
    assert tail == after or tail == after.lstrip("y"), tail[:40]
    assert set(head) <= {"x", " "}


async def test_text_that_only_looks_like_a_secrets_start_is_kept(tmp_path: Path) -> None:
    """Left out are the secret's bytes the cut goes through, not whatever ends like its
    start: 'p@' followed by another byte than the secret's next one stays."""
    before = "x " * (HALF // 2 - 1) + "p@"  # the head ends with 'p@', then comes '!'
    head, _ = await capped(tmp_path, before + "!" + "z " * HALF, (PASSWORD,))
    assert head == before
