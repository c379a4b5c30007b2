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
    """stdout's text layer, on its buffer, raising OutputError for a failed write."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
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


#: the text layers replaced, kept alive: a layer freed closes the buffer it shares
_REPLACED: list[TextIO] = []


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
    sys.stdout = _Output(
        stream.buffer,
        encoding=stream.encoding,
        errors="backslashreplace",
        newline="\n",
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )
