"""``dsh run``'s prompt: its words, and the text piped in where a ``-`` stands (``dsh
sessions resume`` reads its own so, through ``CommandContext.read_prompt``)."""

from __future__ import annotations

import os
import select
import stat
import sys

from dsh._cli_args import UsageError

__all__ = ["prompt_text", "read_prompt", "refuse_not_utf8"]


def read_prompt(parts: list[str], command: str = "run") -> str:
    """The prompt of ``dsh COMMAND`` (``prompt_text``), refused when it is empty: a
    UsageError (status 2) for each thing ``dsh run`` refuses, its message begun with
    ``command``."""
    prompt = prompt_text(parts, command)
    if not prompt.strip():
        raise UsageError(
            f'{command}: the prompt is empty; give the text to send (dsh run "list the files")'
        )
    return prompt


def prompt_text(parts: list[str], command: str = "run") -> str:
    """``dsh run``'s prompt: its words joined by spaces, and in place of ``-`` the text
    read from stdin, set off from the words by blank lines (a byte order mark dropped,
    Windows line ends read as ``\\n``). ``command`` begins what a UsageError says."""
    if parts.count("-") > 1:
        raise UsageError(f"{command}: - (stdin) is given more than once; stdin can be read once")
    for number, part in enumerate(parts, 1):
        refuse_not_utf8(part, f"{command}: the prompt's word {number}")
    if "-" not in parts:
        if _input_waits():
            print(
                "dsh: the text piped in is not sent: put - in the prompt where it goes "
                "(... | dsh run summarise this -)",
                file=sys.stderr,
            )
        return " ".join(parts)
    at = parts.index("-")
    stdin = sys.stdin
    if hasattr(stdin, "buffer"):
        data = stdin.buffer.read()
    else:  # a program calling main() may have put a text stream (StringIO) there
        data = stdin.read().encode(errors="surrogateescape")
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n").strip("\n")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{command}: stdin is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    pieces = [" ".join(parts[:at]), text, " ".join(parts[at + 1 :])]
    if not text.strip() and len(parts) > 1:  # `git diff | dsh run review -` with no diff
        print("dsh: warning: stdin (-) is empty: only the prompt's words are sent", file=sys.stderr)
    return "\n\n".join(piece for piece in pieces if piece)


def refuse_not_utf8(word: str, what: str) -> None:
    """Refuse text that was not UTF-8 on the command line, a prompt word or ``-s``
    (Python keeps each such byte as a lone surrogate, which would be sent as
    ``\\udce9``), as stdin that is not is refused: a UsageError saying ``what`` it is,
    its bytes shown as U+FFFD."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        try:
            given = os.fsencode(word)
            given.decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate that was no byte given: as it is
            given, why = word.encode("utf-8", "surrogatepass"), "it holds a lone surrogate"
        except UnicodeDecodeError as exc:
            why = f"{exc.reason} at byte {exc.start}"
        else:  # escaped bytes that make UTF-8 (no byte given was): said as it is
            why = "it holds a lone surrogate"
        from dsh._config_yaml import shown as shown_value

        shown = shown_value(given.decode("utf-8", "replace"))
        raise UsageError(f"{what} ({shown}) is not UTF-8 text ({why})") from None


def _input_waits() -> bool:
    """Whether text was piped or redirected to a ``dsh run`` that will not read it (it
    reads stdin only for a ``-``): llm users expect it sent. A pipe is looked at only if
    something is in it already (a byte of it is read: nothing else reads it)."""
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return os.fstat(fd).st_size > os.lseek(fd, 0, os.SEEK_CUR)
        if stat.S_ISFIFO(mode) and select.select([fd], [], [], 0)[0]:
            return os.read(fd, 1) != b""
    except (AttributeError, ValueError, OSError):  # no stdin, or not a file: nothing piped
        pass
    return False
