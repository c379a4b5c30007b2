"""With stderr not a terminal (a log, a pipe), what dsh says on a signal is a line of its
own with no blank line before it: no ``^C`` was echoed there, and the lines before it
end with their line ends; at a terminal, a line of its own too (tests/cli/
test_signals_way_out.py)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from cli_support import signalled_while_asked, text_reply


@pytest.mark.parametrize(
    ("signum", "status", "said"),
    [
        (signal.SIGTERM, 143, "dsh: terminated"),
        (signal.SIGQUIT, 131, "dsh: quit"),
    ],
)
def test_no_blank_line_before_what_a_signal_says_in_a_log(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    signum: int,
    status: int,
    said: str,
) -> None:
    server = model_server([text_reply("part of an answer", then="stall")])
    model = f"openai-compatible:tiny@{server.url}"
    code, err = signalled_while_asked(
        server, signum, "-m", model, "run", "hi", env=cli_env, cwd=tmp_path
    )
    assert code == status, err
    lines = err.splitlines()
    assert said in lines, err
    assert lines[lines.index(said) - 1] != "", err
    assert "\n\n" not in err, err
