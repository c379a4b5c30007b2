"""The wording of the ``bash`` tool's result around the command's output: what stands
for no output, and the status line (the exit code, or the signal that killed the
command). The tool (``_bash``) writes it and the renderer (``dsh._render``) reads it,
so the two cannot drift apart. Only ``re`` at import: the renderer loads at start-up."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["NO_OUTPUT", "NO_OUTPUT_RESULT", "status"]

#: The result's first line when the command printed nothing (its exit code follows).
NO_OUTPUT: Final = "(no output)"
_EXITED: Final = "exit code"
_KILLED: Final = "killed by signal"


def status(code: int | None) -> str:
    """The result's last line: ``[exit code N]``, or ``[killed by signal NAME]`` (the
    number for a signal without a name) for a negative ``code``."""
    if code is not None and code < 0:
        import signal  # on first use: not at start-up

        try:
            return f"[{_KILLED} {signal.Signals(-code).name}]"
        except ValueError:
            return f"[{_KILLED} {-code}]"
    return f"[{_EXITED} {code}]"


#: The whole result of a command that printed nothing: ``NO_OUTPUT`` and a status line
#: (a command's output may begin so too).
NO_OUTPUT_RESULT: Final = re.compile(
    rf"{re.escape(NO_OUTPUT)}\n"
    rf"\[(?:{re.escape(_EXITED)} (?:-?\d+|None)|{re.escape(_KILLED)} \w+)\]"
)
