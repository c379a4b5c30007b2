"""Config files read from a pipe or a FIFO, kept for the rest of one ``dsh`` command.

Such a file can be read once (``dsh -c <(cat dsh.yml) ...``: a second read finds it
empty; a second open of a FIFO waits for a writer that never comes), while a command
may read its config more than once (the key hiding of an error report reads it again).
The CLI keeps them for the length of one command (``kept``); a program using dsh as a library reads
each time, as it reads a regular file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: path -> the text read from it; None: nothing is kept
TEXTS: dict[str, str] | None = None


@contextmanager
def kept() -> Iterator[None]:
    """Keep what is read from pipes within the block (one ``dsh`` command; ``main``
    may run more than once in a process, and a program using dsh after it reads each
    time again)."""
    global TEXTS
    TEXTS = {}
    try:
        yield
    finally:
        TEXTS = None
