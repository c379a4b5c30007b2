"""The ``dsh`` command's stdout, whose write errors say they are its own: a full disk or
an I/O error while printing (``dsh models >/dev/full``) is ``OutputError``, which ``main``
reports as the output that cannot be written, not as a crash, and not as the failure of
the plugin whose command was printing. A closed pipe stays BrokenPipeError (``| head``:
a quiet stop)."""

from __future__ import annotations

import io
import sys
from typing import TextIO

__all__ = ["OutputError", "tag_output_errors"]


class OutputError(OSError):
    """Writing the command's output failed (not a closed pipe)."""


class _Output(io.TextIOWrapper):
    """stdout's text layer, on its buffer, raising OutputError for a failed write.
    ``unbuffered``: each write is flushed (``python -u``: the buffer under it is dsh's
    own, see ``tag_output_errors``)."""

    unbuffered = False

    def write(self, text: str) -> int:
        try:
            written = super().write(text)
            if self.unbuffered:
                super().flush()
            return written
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _tagged(error) from error

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _tagged(error) from error

    def close(self) -> None:
        """Flushed, never closed: the buffer is the one of the stream this layer
        replaced (a program calling ``main()`` may put that stream back and go on
        writing to it)."""
        if not self.closed:
            self.flush()


#: the text layers replaced, kept alive: a layer freed closes the buffer it shares (and
#: so would a buffer of dsh's own, freed, close the raw file under it)
_REPLACED: list[TextIO | io.BufferedWriter] = []


def _tagged(error: OSError) -> OutputError:
    if error.errno is None:
        return OutputError(str(error))
    return OutputError(error.errno, error.strerror)


def tag_output_errors() -> None:
    """Put stdout's text layer in place, where stdout is the process's own
    (``sys.__stdout__``: a test's capture, a ``redirect_stdout`` file or a program's
    own stream is left alone), writing what it cannot encode (a lone surrogate: bytes that
    were not UTF-8, in a file name or a model's answer) as ``\\udcff`` rather than
    failing the write, as stderr does."""
    stream: TextIO = sys.stdout
    if type(stream) is not io.TextIOWrapper or stream is not sys.__stdout__:
        if isinstance(stream, io.TextIOWrapper):  # ours already, a capture, a file
            stream.reconfigure(errors="backslashreplace")
        return
    stream.flush()
    _REPLACED.append(stream)
    buffer = stream.buffer
    unbuffered = isinstance(buffer, io.RawIOBase)
    if unbuffered:
        # PYTHONUNBUFFERED=1 (python -u): the raw file, one write of which may take only
        # part of the text (a pipe closed as it is written: 64 KiB of 250), the rest
        # silently lost; a buffered writer writes it all, or raises (141 for a pipe)
        buffer = io.BufferedWriter(buffer)
        _REPLACED.append(buffer)
    output = _Output(
        buffer,
        encoding=stream.encoding,
        errors="backslashreplace",
        newline="\n",
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )
    output.unbuffered = unbuffered
    sys.stdout = output
