"""Config files read from a pipe or a FIFO, kept for the rest of one ``dsh`` command.

Such a file can be read once (``dsh -c <(cat dsh.yml) ...``: a second read finds it
empty; a second open of a FIFO waits for a writer that never comes), while a command
may read its config more than once (the key hiding of an error report reads it again).
The CLI turns keeping on at its start (``keep``); a program using dsh as a library reads
each time, as it reads a regular file.
"""

from __future__ import annotations

#: path -> the text read from it; None: nothing is kept
TEXTS: dict[str, str] | None = None


def keep() -> None:
    """Keep what is read from pipes from now on, forgetting what an earlier command
    kept (``main`` may run more than once in a process)."""
    global TEXTS
    TEXTS = {}
