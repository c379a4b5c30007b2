"""Wrappers: programs that run the command given after their own options
(``sudo -u root rm``, ``timeout -s KILL 5 cat .env``, ``env -C dir cat x``).

Which of a wrapper's options take a value is not known here, so where the command
behind it starts is a guess: ``behind`` gives every word that may be it. A word after
an option may be that option's value, so the next word is a candidate too; a word
that follows no option is the command (or one operand of the wrapper, such as
``taskset``'s mask), and what comes after the command is its arguments, which are not
run. A nested wrapper starts over. So the candidates are few, and checking each
costs the length of the command once: a long command behind a wrapper is checked in
linear time (every word on, as before this module, was quadratic). When more than
``MAX_CANDIDATES`` words could be the command, ``behind`` gives None and the caller
fails closed. ``WRAPPERS`` is a closed list (docs/permissions.md names it); where a
wrapper's own syntax hides what it runs (``su -c``, ``unshare`` given no command),
``_wrapper_grammar`` says so.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._getopt import long_in, long_option

__all__ = [
    "MAX_CANDIDATES",
    "MULTICALL",
    "VERBS",
    "WRAPPERS",
    "WRAPPER_ARG",
    "behind",
    "changes_directory",
    "moved_at",
    "moved_to",
    "skip_assignments",
]

#: multi-call programs: each runs the applet its first word names (``busybox rm``,
#: ``toybox sh -c``), read as wrappers and, given ``-c``, as shells (``_readings``)
MULTICALL: Final = frozenset({"busybox", "toybox"})
#: the closed list: a program not in it is not looked behind (docs/permissions.md names
#: them all; ``_wrapper_grammar`` has the ones whose own syntax also matters)
WRAPPERS: Final = frozenset(
    {
        # shell builtins and coreutils (also with macOS's g prefix)
        *("builtin", "command", "env", "exec", "nice", "nohup", "stdbuf", "time"),
        *("timeout", "chroot", "genv", "gnice", "gnohup", "gstdbuf", "gtimeout", "gchroot"),
        # scheduling, limits, namespaces, users, sandboxes (util-linux and the like)
        *("chrt", "ionice", "taskset", "numactl", "cgexec", "prlimit", "setpriv"),
        *("setsid", "flock", "unshare", "nsenter", "runuser", "sudo", "doas", "pkexec"),
        *("run0", "gosu", "su-exec", "setuidgid", "chpst", "envdir", "softlimit", "runcon"),
        *("envuidgid", "setlock", "pgrphack"),
        "machinectl",
        # ldd runs each file it is given (a program with another loader runs as it is)
        "ldd",
        *("setarch", "linux32", "linux64", "cpulimit", "trickle", "timelimit", "lckdo"),
        *("systemd-run", "systemd-inhibit", "systemd-cat", "flatpak-spawn", "sandbox-exec"),
        *("firejail", "bwrap", "proot", "fakeroot", "faketime", "eatmydata", "nocache"),
        # tracers, debuggers, compilers' launchers, job runners
        *("strace", "ltrace", "valgrind", "catchsegv", "heaptrack", "ccache", "distcc"),
        *("icecc", "mpirun", "mpiexec", "srun", "tsp", "daemonize", "tini", "dumb-init"),
        # sessions, terminals, proxies, graphics
        *("ssh-agent", "dbus-run-session", "dbus-launch", "xvfb-run", "caffeinate"),
        *("unbuffer", "rlwrap", "torsocks", "torify", "tsocks", "proxychains"),
        *("proxychains4", "sshpass", "vglrun", "optirun", "primusrun", "prime-run"),
        *("gamemoderun", "chronic", "ifne"),
        # multiplexers of commands
        *MULTICALL,
        *("parallel", "sem", "watch", "xargs"),
    }
)
#: an option, an assignment (``env A=1``) or a duration or number (``timeout 5s``)
WRAPPER_ARG: Final = re.compile(r"-.*|[A-Za-z_][A-Za-z0-9_]*=.*|[0-9]+(\.[0-9]+)?[smhd]?")
#: how many words behind one wrapper may be the command it runs, at most
MAX_CANDIDATES: Final = 64
#: words that follow no option before the command: one operand of the wrapper
#: (``taskset MASK``), then the command
_POSITIONAL: Final = 2
#: per wrapper, its options that run the command in another directory
#: (``env -C dir``, ``sudo -D dir``, ``sudo -R root``, ``--chdir``, parallel's
#: ``--workdir``); in a cluster the
#: letter counts, and a long option may be shortened as getopt allows (``--ch=dir``)
_CHDIR_LETTERS: Final = {
    "env": "C",
    "genv": "C",
    "sudo": "DRi",
    "run0": "D",
    "unshare": "Rw",
    "nsenter": "rwW",
}
#: of those, the ones whose value is no directory (a root, or sudo -i's home)
_ROOT_LETTERS: Final = "Rri"
_CHDIR_LONG: Final = ("--chdir", "--workdir", "--wd")
#: long options that run the command in a directory not followed (a root, a login
#: shell's home, a directory inside a namespace, systemd-run's)
_ROOT_LONG: Final = ("--chroot", "--root", "--login", "--wdns", "--working-directory")
#: wrappers that always run the command in another directory (chroot in its root's
#: ``/``; systemd-run's service in ``/``; machinectl shell's in the user's home)
_ALWAYS_MOVED: Final = frozenset({"chroot", "gchroot", "systemd-run", "machinectl"})
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
#: wrappers that run each of their operands as a program (``ldd a b``: ``a``, ``b``)
_EACH_RUNS: Final = frozenset({"ldd"})
#: wrappers that run a command only after a verb (then their operands, options and the
#: command): ``machinectl shell [USER@]HOST PROGRAM ARGS``; their other verbs run none
VERBS: Final = {"machinectl": "shell"}


def behind(words: list[str], index: int) -> list[int] | None:
    """The indexes of the words that may start the command the wrapper at ``index``
    runs (nested wrappers included), or None when there are more than
    ``MAX_CANDIDATES``."""
    out: list[int] = []
    positional = 0
    after_option = False
    each = os.path.basename(words[index]) in _EACH_RUNS
    if (verb := VERBS.get(os.path.basename(words[index]))) is not None:
        # machinectl shell HOST PROGRAM: looked behind from the verb, after any
        # options (generous: any word that is the verb); with no such verb, nothing
        index = next((i for i in range(index + 1, len(words)) if words[i] == verb), len(words))
    for i in range(index + 1, len(words)):
        word = words[i]
        if each:
            if not word.startswith("-"):
                out.append(i)
        elif os.path.basename(word) in WRAPPERS:
            out.append(i)  # a nested wrapper: its command comes later
            positional, after_option = 0, False
        elif WRAPPER_ARG.fullmatch(word):
            after_option = word.startswith("-")
            continue
        else:
            out.append(i)
            if not after_option:
                positional += 1
                if positional >= _POSITIONAL:
                    break  # the command was found: what follows are its arguments
            after_option = False
        if len(out) > MAX_CANDIDATES:
            return None
    return out


def changes_directory(words: list[str], stop: int) -> bool:
    """Whether a wrapper among ``words[:stop]`` runs what follows it in another
    directory (``env -C dir``, ``env --chdir=dir``, ``sudo -D dir``): a relative path
    behind it names another file than it seems to. Generous: any option word after
    such a wrapper holding the letter counts."""
    at = moved_at(words)
    return at is not None and at <= stop


def moved_at(words: list[str]) -> int | None:
    """The index of the word after the first option of a wrapper that runs what follows
    in another directory (see ``changes_directory``; after chroot or systemd-run
    itself), or None."""
    found = _moved(words)
    return None if found is None else found[0] + 1


def moved_to(words: list[str]) -> tuple[int, str | None] | None:
    """For the first wrapper option that runs what follows in another directory (see
    ``moved_at``): the index of the word it starts at and the directory as written
    (None: not known: a root, ``sudo -R``, ``--chroot``, a login shell's home,
    chroot, or no value). None: no such option."""
    found = _moved(words)
    return None if found is None else found[1:]


def _moved(words: list[str]) -> tuple[int, int, str | None] | None:
    """The index of the option (or of chroot), where what it runs starts, and the
    directory (see ``moved_to``). chroot and systemd-run count as the program (first
    after assignments, or behind a wrapper), the long options of ``_ROOT_LONG`` only
    behind a wrapper (``bash --login x`` is a shell's own option)."""
    letters = ""
    wrapped = False
    first = skip_assignments(words)
    for index, word in enumerate(words):
        name = os.path.basename(word)
        if name in _ALWAYS_MOVED and (wrapped or index == first):
            return index, index + 1, None
        if name in WRAPPERS:
            letters, wrapped = _CHDIR_LETTERS.get(name, ""), True
            continue
        if word.startswith("--"):
            longs = (*_CHDIR_LONG, *_ROOT_LONG) if wrapped else _CHDIR_LONG
            if not long_in(word, longs):
                continue
            if long_option(word, "--login") and "=" not in word:
                return index, index + 1, None  # a login shell's home; it takes no value
            value, after = _value(words, index, word.split("=", 1)[1] if "=" in word else "")
            # a root is not followed; --w may be --wd as well as --wdns: the directory
            # is followed (its readings only make the call stricter)
            root_only = not long_in(word, _CHDIR_LONG)
            return index, after, None if root_only else value
        if word.startswith("-") and (at := _letter_at(word, letters)) is not None:
            if word[at] == "i":  # sudo -i: the login shell's home; it takes no value
                return index, index + 1, None
            value, after = _value(words, index, word[at + 1 :])
            return index, after, None if word[at] in _ROOT_LETTERS else value
    return None


def skip_assignments(words: list[str]) -> int:
    """The index of the first word that is no ``NAME=value`` assignment."""
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index]):
        index += 1
    return index


def _letter_at(word: str, letters: str) -> int | None:
    return next((i for i, c in enumerate(word) if i and c in letters), None)


def _value(words: list[str], index: int, attached: str) -> tuple[str | None, int]:
    """An option's value (attached to it, or the next word) and where what follows starts."""
    if attached:
        return attached, index + 1
    if index + 1 < len(words):
        return words[index + 1], index + 2
    return None, index + 1
