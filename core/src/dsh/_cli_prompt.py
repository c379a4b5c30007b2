"""``dsh run``'s prompt: its words, and the text piped in where a ``-`` stands (``dsh
sessions resume`` reads its own so, through ``CommandContext.read_prompt``)."""

from __future__ import annotations

import os
import select
import shlex
import stat
import sys
from pathlib import Path

from dsh._cli_args import UsageError

__all__ = [
    "config_on_stdin",
    "prompt_text",
    "read_prompt",
    "read_prompt_in_loop",
    "stdin_taken",
    "utf8_text",
]


def read_prompt(
    parts: list[str], command: str = "run", line: str | None = None, *, config: str | None = None
) -> str:
    """The prompt of ``dsh COMMAND`` (``prompt_text``), refused when it is empty: a
    UsageError (status 2) for each thing ``dsh run`` refuses, its message begun with
    ``command``. ``line``: the command line before the prompt's words, for the examples
    of the hints (default ``dsh COMMAND``); ``config``: how the config file was named
    when it is stdin (``config_on_stdin``)."""
    prompt = prompt_text(parts, command, line, config=config)
    if not prompt.strip():
        example = f"dsh {command}" if line is None else line
        raise UsageError(
            f'{command}: the prompt is empty; give the text to send ({example} "list the files")'
        )
    return prompt


async def read_prompt_in_loop(
    parts: list[str], command: str, line: str | None = None, *, config: str | None = None
) -> str:
    """``read_prompt`` from a running event loop (a plugin command's): stdin read in a
    daemon thread, so that Ctrl-C (which cancels the loop's task) ends the command at
    once, as it ends ``dsh run -``, the thread left blocked in its read to end with the
    process."""
    import threading
    from contextlib import suppress

    import anyio
    from anyio.from_thread import run_sync
    from anyio.lowlevel import current_token

    token, done = current_token(), anyio.Event()
    outcome: list[str | BaseException] = []

    def read() -> None:
        try:
            outcome.append(read_prompt(parts, command, line, config=config))
        except BaseException as error:  # raised in the loop's task, as if read there
            outcome.append(error)
        with suppress(Exception):  # the loop is gone: interrupted, no one waits
            run_sync(done.set, token=token)

    threading.Thread(target=read, name="dsh prompt reader", daemon=True).start()
    await done.wait()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def prompt_text(
    parts: list[str], command: str = "run", line: str | None = None, *, config: str | None = None
) -> str:
    """``dsh run``'s prompt: its words joined by spaces, and in place of ``-`` the text
    read from stdin, set off from the words by blank lines (a byte order mark dropped,
    Windows line ends read as ``\\n``). ``command`` begins what a UsageError says;
    ``line`` (default ``dsh COMMAND``) is the command before the prompt's words in the
    example of the warning for text piped in with no ``-``. ``config``: how the config
    file was named when it is stdin (``config_on_stdin``): a ``-`` is refused then, and
    the text piped in (the config's) is not said to be left unsent."""
    if parts.count("-") > 1:
        raise UsageError(f"{command}: - (stdin) is given more than once; stdin can be read once")
    if config is not None and "-" in parts:
        raise UsageError(stdin_taken(command, config))
    parts = [
        utf8_text(part, f"{command}: the prompt's word {number}")
        for number, part in enumerate(parts, 1)
    ]
    if "-" not in parts:
        typed = f"dsh {command}" if line is None else line
        if config is None and _input_waits():
            print(
                "dsh: the text piped in is not sent: put - in the prompt where it goes "
                f"(... | {typed} summarise this -)",
                file=sys.stderr,
            )
        return " ".join(parts)
    at = parts.index("-")
    stdin = sys.stdin
    if stdin.isatty():  # typed, not piped: the read would wait with nothing said
        print(
            "dsh: reading the text for - from the terminal; end it with Ctrl-D on a line "
            "of its own",
            file=sys.stderr,
            flush=True,
        )
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


def utf8_text(word: str, what: str) -> str:
    """``word`` from the command line (a prompt word, ``-s``) as UTF-8 text, or refused
    as stdin that is not is refused: a UsageError saying ``what`` it is, its bytes shown
    as U+FFFD. Python keeps each byte its locale's encoding does not decode as a lone
    surrogate (which would be sent as ``\\udce9``): under an ASCII locale (``LC_ALL=C``
    with UTF-8 mode off) every non-ASCII byte, so a word whose bytes are UTF-8 is
    decoded as such; a word whose bytes are not is refused."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        try:
            given = os.fsencode(word)
            text = given.decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate that was no byte given: as it is
            given, why = word.encode("utf-8", "surrogatepass"), "it holds a lone surrogate"
        except UnicodeDecodeError as exc:
            why = f"{exc.reason} at byte {exc.start}"
        else:
            if _locale_decodes_utf8():  # escaped bytes that make UTF-8 (from a program's
                # own argv list: no byte the system gave was): said as it is
                why = "it holds a lone surrogate"
            else:
                return text
        from dsh._quoted import shown as shown_value

        shown = shown_value(given.decode("utf-8", "replace"))
        raise UsageError(f"{what} ({shown}) is not UTF-8 text ({why})") from None
    return word


def _locale_decodes_utf8() -> bool:
    """Whether the command line was decoded as UTF-8 (a UTF-8 locale, or UTF-8 mode)."""
    import codecs

    return codecs.lookup(sys.getfilesystemencoding()).name == "utf-8"


#: The names of stdin, whatever file it is (Linux, the BSDs and macOS).
_STDIN_NAMES = frozenset(("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"))


def config_on_stdin(config: Path | None, cwd: Path | None = None) -> str | None:
    """How the config file was named (``-c /dev/stdin``, ``DSH_CONFIG=/dev/fd/0``) when
    it is stdin: one of stdin's names, or the file stdin reads (the same device and
    inode: ``dsh -c dsh.yml run - < dsh.yml``); else None. ``config``: ``-c``'s file,
    else ``$DSH_CONFIG`` names it, relative to ``cwd`` (the workspace; default the
    current directory). The null device is no conflict: it reads empty each time."""
    if config is not None:
        named, path = f"-c {shlex.quote(str(config))}", config
    else:
        value = os.environ.get("DSH_CONFIG")
        if not value:
            return None
        named, path = f"DSH_CONFIG={shlex.quote(value)}", (cwd or Path.cwd()) / value
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # a program's own stream (StringIO)
        return None
    if fd == 0 and os.path.normpath(path) in _STDIN_NAMES:
        return named
    try:
        read = os.fstat(fd)
        same = os.path.samestat(os.stat(path), read)
        null = os.path.samestat(os.stat(os.devnull), read)
    except (OSError, ValueError):  # no such file: what reads the config says so
        return None
    return named if same and not null else None


def stdin_taken(command: str, config: str) -> str:
    """What ``dsh COMMAND`` says when stdin is its config file (named ``config``) and
    would be its prompt too (``prompts``: chat's)."""
    what = "prompts" if command == "chat" else "prompt"
    return (
        f"{command}: stdin cannot be both the config file ({config}) and the {what}; name "
        "the config by its file (-c dsh.yml)"
    )


def _input_waits() -> bool:
    """Whether text was piped or redirected to a ``dsh run`` that will not read it (it
    reads stdin only for a ``-``): llm users expect it sent. A pipe is looked at only if
    something is in it already, and nothing of it is read (a plugin's command may read
    it after)."""
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return os.fstat(fd).st_size > os.lseek(fd, 0, os.SEEK_CUR)
        if stat.S_ISFIFO(mode) and select.select([fd], [], [], 0)[0]:
            return _waiting(fd) > 0
    except (AttributeError, ValueError, OSError):  # no stdin, or not a file: nothing piped
        pass
    return False


def _waiting(fd: int) -> int:
    """How many bytes the pipe ``fd`` holds, without reading any (FIONREAD)."""
    import array
    import fcntl
    import termios

    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count, True)
    return count[0]
