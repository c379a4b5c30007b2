"""The ``persistence:`` section of ``dsh.yml`` and where sessions go by default."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dsh_persistence._errors import PersistenceError
from dsh_persistence._postgres_url import NUL

__all__ = [
    "ENV_DIRECTORY",
    "ENV_URL",
    "PersistenceSettings",
    "default_directory",
    "expanded",
    "filed_section",
]

#: Overrides the default session directory (tests and CI point it at a temp dir).
ENV_DIRECTORY = "DSH_PERSISTENCE_DIR"
#: The PostgreSQL URL when ``url`` is not set (keeps a password out of dsh.yml).
ENV_URL = "DSH_PERSISTENCE_URL"
#: A variable in ``url``: ``${NAME}`` anywhere, or ``$NAME`` as the whole of it (a
#: password may hold a ``$``: ``pa$word`` is taken). dsh's own rules for ``base_url``
#: and ``headers``, and why they differ, are in ``dsh._unexpanded``: this one stays here,
#: as the plugin imports dsh's public API only.
_VARIABLE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|^\s*\$[A-Za-z_][A-Za-z0-9_]*\s*$")
#: The longest ``checkpoint_delay`` accepted, in seconds: an hour.
MAX_CHECKPOINT_DELAY = 3600.0


def default_directory(env: Mapping[str, str] | None = None) -> Path:
    """Where sessions are stored when ``directory`` is not set.

    ``$DSH_PERSISTENCE_DIR`` if set and not empty (blank: ``PersistenceError``); otherwise
    ``$XDG_DATA_HOME/dsh/sessions`` (when that variable holds an absolute path, as the XDG
    spec requires); otherwise
    ``%LOCALAPPDATA%\\dsh\\sessions`` on Windows and ``~/.local/share/dsh/sessions``
    elsewhere.
    """
    env = os.environ if env is None else env
    named = _variable(env, ENV_DIRECTORY, "for the default, or name a directory")
    if named:
        try:
            return expanded(Path(named))
        except ValueError as exc:
            raise PersistenceError(f"${ENV_DIRECTORY}: {exc}") from None
    xdg = env.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "dsh" / "sessions"
    local = env.get("LOCALAPPDATA")
    if os.name == "nt" and local:
        return Path(local) / "dsh" / "sessions"
    try:
        return expanded(Path("~")) / ".local" / "share" / "dsh" / "sessions"
    except ValueError as exc:
        raise PersistenceError(
            f"the default session directory: {exc}; set persistence.directory or ${ENV_DIRECTORY}"
        ) from None


def _variable(env: Mapping[str, str], name: str, instead: str) -> str | None:
    """The environment variable ``name``: None if unset or empty; ``PersistenceError``
    if blank (spaces only), as the keys of dsh.yml are refused, saying to unset it
    ``instead``: a directory named with spaces, or libpq's defaults, which nobody means."""
    value = env.get(name)
    if value and not value.strip():
        raise PersistenceError(f"${name} is blank: unset it {instead}")
    return value or None


def expanded(path: Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded: ValueError, saying why, for
    one Python cannot expand (no such user, no home directory) and for a NUL character,
    which no path can hold (both made the first use of the path fail as a crash)."""
    text = str(path)
    if "\0" in text:
        raise ValueError("holds a NUL character (\\0), which no path can")
    try:
        return path.expanduser()
    except RuntimeError:  # "Could not determine home directory."
        head = path.parts[0]
        if head == "~":
            raise ValueError("no home directory to expand ~ with ($HOME is not set)") from None
        raise ValueError(f"no user {head[1:]!r} ({head})") from None


class PersistenceSettings(BaseModel):
    """How and where sessions are stored (the ``persistence:`` section of ``dsh.yml``)."""

    # hide_input_in_errors: a refused ``url`` may hold a password
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    #: ``jsonl``: one file per session (default). ``sqlite``: one database file, one row
    #: per event, shared safely by several processes on one machine. ``postgresql``
    #: (or ``postgres``): a PostgreSQL database shared by many workers on many machines
    #: (needs the ``dsh-persistence[postgres]`` extra).
    backend: Literal["jsonl", "sqlite", "postgresql"] = "jsonl"
    #: Where session files (and the default database) go; see ``default_directory``.
    directory: Path | None = None
    #: The SQLite database file (``sqlite`` only); default ``<directory>/sessions.sqlite3``.
    database: Path | None = None
    #: The PostgreSQL database (``postgresql`` only): a libpq URL or key/value string;
    #: default ``$DSH_PERSISTENCE_URL``, else libpq's own defaults (``PGHOST``...). Never
    #: shown with its password (``repr=False``: not in the settings' repr either).
    url: str | None = Field(default=None, repr=False)
    #: ``flush``: every flush (after each turn, at dispose) returns only once the data is
    #: on disk; mid-turn checkpoints are written without waiting for the disk.
    #: ``always``: checkpoints are fsync'd too. ``never``: nothing is fsync'd (a process
    #: crash loses nothing written, a power cut can).
    fsync: Literal["flush", "always", "never"] = "flush"
    #: Write a running turn to disk in the background, ``checkpoint_delay`` seconds after
    #: its prompt (or a steer) is taken, a tool call starts or ends or a step ends, so that
    #: a crash in a long turn keeps its prompt and what it already did. Turns that end
    #: sooner are written by their flush.
    #: (Strict, as the core's options: ``'yes'`` or ``'0.5'`` quoted is not taken.)
    checkpoints: bool = Field(default=True, strict=True)
    #: Seconds from the event that asks for a checkpoint to the write: 0 to an hour.
    checkpoint_delay: float = Field(
        default=0.05, ge=0, le=MAX_CHECKPOINT_DELAY, allow_inf_nan=False, strict=True
    )

    @field_validator("backend", mode="before")
    @classmethod
    def _postgres_alias(cls, value: object) -> object:
        return "postgresql" if value == "postgres" else value

    @field_validator("directory", "database", mode="before")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        # "" would be the path "." (the workspace itself), which an empty
        # $DSH_PERSISTENCE_DIR does not mean (unset): refused rather than guessed; blank
        # would be a directory named with spaces in the workspace, which nobody means
        # (a PurePath given in code: Path(" "); Path("") is Path("."), the workspace)
        if isinstance(value, (str, PurePath)) and not str(value).strip():
            raise ValueError("is empty: leave it out for the default, or write . for the workspace")
        return value

    @field_validator("directory", "database")
    @classmethod
    def _expandable(cls, value: Path | None) -> Path | None:
        if value is not None:
            expanded(value)  # checked now, at its key; expanded when used
        return value

    @field_validator("url")
    @classmethod
    def _whole(cls, value: str | None) -> str | None:
        # libpq reads the string up to a NUL and connects to what comes before it
        if value is not None and "\0" in value:
            raise ValueError(NUL)
        # blank: libpq's defaults, not $DSH_PERSISTENCE_URL, which it looks like it means
        if value is not None and not value.strip():
            raise ValueError(f"is empty: leave it out for ${ENV_URL} or libpq's defaults")
        # dsh.yml expands no variables: libpq would be given ${PGPASS} as the password
        if value is not None and _VARIABLE.search(value):
            raise ValueError(
                "holds a variable ($NAME or ${NAME}), which is not expanded: leave url out "
                f"and set ${ENV_URL} to the URL, or the password in $PGPASSWORD"
            )
        return value

    def unused(self) -> list[str]:
        """Warnings for keys set that the chosen backend does not read (``url`` is
        PostgreSQL's, ``database`` SQLite's, ``directory`` JSONL's and SQLite's when
        ``database`` is not set): set, they would otherwise be ignored silently."""
        used_by = {"url": "postgresql", "database": "sqlite", "directory": "jsonl or sqlite"}
        warnings = [
            f"persistence.{key} is ignored: the {self.backend} backend does not use it "
            f"(it is for backend: {backend})"
            for key, backend in used_by.items()
            if getattr(self, key) is not None and self.backend not in backend.split(" or ")
        ]
        if self.backend == "sqlite" and self.directory is not None and self.database is not None:
            warnings.append(
                "persistence.directory is ignored: persistence.database names the SQLite file"
            )
        return warnings

    def postgres_url(self, env: Mapping[str, str] | None = None) -> tuple[str, str]:
        """The PostgreSQL URL in use and where it comes from, for messages:
        ``url``, else ``$DSH_PERSISTENCE_URL``, else "" (libpq's defaults)."""
        if self.url is not None:
            return self.url, "persistence.url"
        env = os.environ if env is None else env
        named = _variable(env, ENV_URL, "for libpq's defaults, or set it to a URL")
        if named:
            return named, f"${ENV_URL}; persistence.url is not set"
        return "", f"persistence.url and ${ENV_URL} are not set"  # location: libpq's defaults

    def anchored(self, workspace: Path) -> PersistenceSettings:
        """These settings with a relative ``directory`` and ``database`` taken from
        ``workspace``, as every path in dsh.yml is (``~`` expanded first)."""
        changes = {}
        for key in ("directory", "database"):
            path: Path | None = getattr(self, key)
            if path is not None and not path.expanduser().is_absolute():
                changes[key] = workspace / path
        return self.model_copy(update=changes) if changes else self

    def session_directory(self, env: Mapping[str, str] | None = None) -> Path:
        """The directory in use: ``directory`` or the default, made absolute."""
        chosen = self.directory.expanduser() if self.directory else default_directory(env)
        return Path.cwd() / chosen if not chosen.is_absolute() else chosen

    def directory_source(self, env: Mapping[str, str] | None = None) -> str:
        """Where ``session_directory`` comes from, for messages about it."""
        if self.directory is not None:
            return "persistence.directory"
        if (os.environ if env is None else env).get(ENV_DIRECTORY):
            return f"${ENV_DIRECTORY}; persistence.directory is not set"
        return "the default; persistence.directory is not set"

    def database_source(self, env: Mapping[str, str] | None = None) -> str:
        """Where ``database_path`` comes from, for messages about it."""
        return "persistence.database" if self.database is not None else self.directory_source(env)

    def database_path(self, env: Mapping[str, str] | None = None) -> Path:
        """The SQLite file in use: ``database`` or ``<directory>/sessions.sqlite3``."""
        if self.database is None:
            return self.session_directory(env) / "sessions.sqlite3"
        chosen = self.database.expanduser()
        return Path.cwd() / chosen if not chosen.is_absolute() else chosen

    def location(self, env: Mapping[str, str] | None = None) -> tuple[str, Path | str, bool]:
        """What identifies the store these settings select: (backend, path, fsync at all).
        Two settings with the same location share one backend object."""
        if self.backend == "postgresql":
            return (self.backend, self.postgres_url(env)[0], self.fsync != "never")
        path = self.database_path(env) if self.backend == "sqlite" else self.session_directory(env)
        return (self.backend, path, self.fsync != "never")


def filed_section(sections: Mapping[str, object]) -> PersistenceSettings | None:
    """The plugin's validated section of dsh.yml (``config.sections``), under whatever
    name its settings were registered: ``persistence`` from its entry point, another
    when it is passed under another name (``config.section("persistence")`` would then
    be refused: no plugin registers settings under it). None when the file has none.
    The first section of its settings model: with two instances of the plugin under
    two names, both read the first one."""
    for section in sections.values():
        if isinstance(section, PersistenceSettings):
            return section
    return None
