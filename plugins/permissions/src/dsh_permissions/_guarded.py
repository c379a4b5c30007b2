"""What ``accept-edits`` does not cover inside the workspace: the config file that holds
the rules (and any ``dsh.yml``/``dsh.yaml``, which ``dsh run`` in its directory loads
whatever file the rules came from), the session store, and files that run code later
outside any rule. An agent that could write the first would rewrite the rules that bind
it (or plant ``mode: bypass`` for the next run); one that could write
the second would forge "always" answers, which are read back from the session log on
``--continue``; one that could write the third would run code no rule sees: git runs
``.git/hooks/*`` and what ``.git/config`` names (``core.hooksPath``, ``core.fsmonitor``,
aliases, filters) on a person's next git command, Mercurial runs the hooks and
extensions ``.hg/hgrc`` names (and ``.hg/sharedpath`` sends it to another repository's),
direnv runs ``.envrc`` on entering the
directory, pre-commit and husky run their hooks on ``git commit``, a git directory under
another name (a ``.git`` file's, a bare repository) runs as ``.git`` does, and Python
runs a venv's ``*.pth`` files and a ``sitecustomize``/``usercustomize`` module at every
start, and imports whatever else a ``site-packages`` directory holds (a venv's
``pyvenv.cfg`` names the interpreter, its ``bin/activate*`` runs in the person's shell,
and the rest of its ``bin`` when the person runs ``pytest``; jupyter reads its
``etc/jupyter`` and ``share/jupyter/kernels``: everything in a directory below the
workspace root holding ``pyvenv.cfg`` or a conda environment's ``conda-meta``, and in
``__pypackages__``, counts). Editing any of them
is asked about. So is an edit given a directory inside the workspace: the tool may
change or create such a file inside it.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any, Final

from dsh.config import CONFIG_FILE_NAMES
from dsh.persistence import in_store, store_location
from dsh_permissions._looked import is_dir, is_file

__all__ = ["RUNS_CODE", "config_file", "guarded", "session_store"]

#: file and directory names, anywhere in the workspace, whose contents run later
#: without a rule seeing it (compared ignoring case: a case-insensitive file system
#: has one ``.git`` for ``.GIT`` and ``.git``)
RUNS_CODE: Final = {
    ".git": "git's own files (its hooks and what its config names run on the next git command)",
    ".hg": (
        "Mercurial's own files (the hooks and extensions its .hg/hgrc names run on the "
        "next hg command)"
    ),
    ".envrc": "a direnv file (direnv runs it on entering the directory)",
    ".pre-commit-config.yaml": "pre-commit's configuration (its hooks run on git commit)",
    ".husky": "husky's git hooks (run on the next git command)",
    "__pypackages__": "PEP 582 packages (the Python that finds them imports what is there)",
    "conda-meta": "a conda environment's record (it makes its directory one, whose programs run)",
    **dict.fromkeys(CONFIG_FILE_NAMES, "a dsh config file (dsh run in its directory loads it)"),
}


#: NTFS short names of the guarded directories ``.git`` and ``.hg``
_SHORT: Final = {"git~1": ".git", "hg~1": ".hg"}
#: characters HFS+ leaves out of a name (``.g\u200cit`` is ``.git`` there)
_IGNORED: Final = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def _name_key(name: str) -> str:
    """A name as a file system that folds names may take it: case and look-alike
    characters folded, characters HFS+ ignores left out, and what NTFS drops or reads
    another way (trailing dots and spaces, an ``:stream`` suffix, the short name
    ``GIT~1``, ``HG~1``). Generous: a name that folds to a guarded one is asked about."""
    key = unicodedata.normalize("NFKC", _IGNORED.sub("", name)).casefold()
    key = key.split(":", 1)[0].rstrip(". ")
    return _SHORT.get(key, key)


def config_file(agent: Any) -> frozenset[str]:
    """The real path of the config file the agent's harness loaded (if it is a file)."""
    source = getattr(getattr(getattr(agent, "harness", None), "config", None), "source", None)
    found = isinstance(source, str) and os.path.isfile(source)
    return frozenset({os.path.realpath(str(source))} if found else ())


async def session_store(agent: Any) -> str | None:
    """The real path of the session store of the agent's harness: the ``location`` of
    the service a persistence plugin gives (``dsh.persistence.store_location``). None
    when no plugin gives a service, or its service gives no location. A service that
    gives a location that is not a path raises (the check then fails closed)."""
    harness = getattr(agent, "harness", None)
    relay = getattr(harness, "relay", None)
    if relay is None:
        return None
    return store_location(await relay.session_persistence(harness))


def guarded(
    readings: tuple[str, ...],
    directory: bool,
    config: frozenset[str],
    store: str | None,
    *,
    root: str | None = None,
) -> str | None:
    """Why ``accept-edits`` does not cover a path (its real ``readings``; ``directory``:
    one of them is a directory, which the tool may change what is in), or None.
    ``root``: the workspace, below which files that run code later are looked for
    (None: they are not)."""
    found = next((p for p in readings if p in config), None)
    if found is not None:
        return f"{found}, the config file that holds the rules"
    if store is not None:
        for reading in readings:
            holds = directory and store.startswith(reading.rstrip(os.sep) + os.sep)
            if holds or in_store(store, reading):
                return (
                    f"{store}, the session store (its logs hold the answers 'always' gave, "
                    "read back on --continue)"
                )
    return None if root is None else _runs_code(readings, directory, root)


def _runs_code(readings: tuple[str, ...], directory: bool, root: str) -> str | None:
    if directory:
        return (
            "a directory: the tool may change or create files inside it that run code "
            "later outside any rule (.git/hooks/*, .envrc); name the files"
        )
    prefix = root.rstrip(os.sep) + os.sep
    for reading in readings:
        if not reading.startswith(prefix):
            continue
        names = reading[len(prefix) :].split(os.sep)
        keys = [_name_key(name) for name in names]
        why = next((RUNS_CODE[k] for k in keys if k in RUNS_CODE), None)
        why = why or _python_startup(keys) or _venv_program(root, names, keys)
        why = why or _in_git_dir(root, names)
        if why is not None:
            return f"{reading}, {why}"
    return None


#: module names Python's ``site`` imports at every start of an interpreter that sees
#: them: as a file (``.py``, a ``.pyc`` also in ``__pycache__``, an extension) or a
#: package directory
_STARTUP: Final = frozenset({"sitecustomize", "usercustomize"})
_SITE: Final = frozenset({"site-packages", "dist-packages"})
#: the directories a venv keeps its activation scripts in (POSIX, Windows)
_SCRIPTS: Final = frozenset({"bin", "scripts"})


def _python_startup(keys: list[str]) -> str | None:
    """Why a file (its folded path components below the workspace) runs at every start
    of Python, or in the shell of the person using a venv, or None: a ``.pth`` file
    in a ``site-packages`` directory (a venv in the workspace) runs its ``import``
    lines; a ``sitecustomize`` or ``usercustomize`` module (file, compiled file or
    package) where ``site`` finds it is imported; a venv's ``pyvenv.cfg`` names the
    interpreter it runs (``home``); its ``bin/activate*`` is sourced; and anything
    else in a ``site-packages`` / ``dist-packages`` directory is imported or run
    (a module, a package's ``entry_points.txt``)."""
    name = keys[-1]
    if any(k.split(".", 1)[0] in _STARTUP for k in keys) or (
        name.endswith(".pth") and _SITE.intersection(keys[:-1])
    ):
        return "a file Python runs at start-up (site imports it in every run of that Python)"
    if name == "pyvenv.cfg":
        return "a venv's configuration (its 'home' names the Python every run of it starts)"
    if name.startswith("activate") and len(keys) > 1 and keys[-2] in _SCRIPTS:
        return "a venv's activation script (the person's shell runs it when they activate it)"
    if _SITE.intersection(keys[:-1]):
        return (
            "in a site-packages directory (Python imports what is there, and runs its "
            "packages' entry points as programs)"
        )
    return None


def _venv_program(root: str, names: list[str], keys: list[str]) -> str | None:
    """Why a path lies in a Python environment, or None: in the ``bin`` or ``Scripts``
    directory beside a ``pyvenv.cfg`` or ``conda-meta`` (the workspace root's too), or anywhere in a
    directory below the root holding ``pyvenv.cfg`` or ``conda-meta`` (a venv, a conda
    environment: the person runs its programs, Python imports its packages, jupyter
    reads its ``etc/jupyter`` and kernels)."""
    directory = root
    for at, key in enumerate(keys):  # directory: the one names[at] lies in
        env = is_file(os.path.join(directory, "pyvenv.cfg")) or is_dir(
            os.path.join(directory, "conda-meta")
        )
        if env and (at > 0 or (key in _SCRIPTS and at < len(keys) - 1)):
            return (
                f"in {directory}, a Python environment (the person runs its programs, "
                "Python imports its packages)"
            )
        directory = os.path.join(directory, names[at])
    return None


def _in_git_dir(root: str, names: list[str]) -> str | None:
    """Why a path lies in a git directory not named ``.git``, or None: one a ``.git``
    file points to (``git init --separate-git-dir``) or a bare repository. A directory
    is one when it holds what git looks for: a ``HEAD`` file and ``objects`` and
    ``refs`` directories (or a ``commondir`` file naming where they are); also when it
    is writing this path that completes them (its hooks and config may be written
    first, ``HEAD`` last)."""
    directory = root
    for at, name in enumerate(names):
        below, last = _name_key(name), at == len(names) - 1
        head = is_file(os.path.join(directory, "HEAD")) or (last and below == "head")
        common = is_file(os.path.join(directory, "commondir")) or (last and below == "commondir")
        stores = all(
            is_dir(os.path.join(directory, d)) or (not last and below == d)
            for d in ("objects", "refs")
        )
        if head and (stores or common):
            return (
                f"in {directory}, a git directory (its hooks and what its config names "
                "run on the next git command)"
            )
        directory = os.path.join(directory, name)
    return None
