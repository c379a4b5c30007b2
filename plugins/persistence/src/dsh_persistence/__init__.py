"""dsh-persistence: every session survives the process, and can be resumed.

The ``persistence`` entry point registers this module. Its hook impls are the methods of
``plugin``, one ``PersistencePlugin`` that follows the ``persistence:`` section of
``dsh.yml``. See plugins/persistence/README.md and docs/persistence.md.

dsh imports this module on every start, so the public names that need pydantic, anyio
or a backend are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    SessionCorruptError,
    SessionDeletedError,
    SessionFormatError,
    SessionInUseError,
    SessionStoreUnusableError,
)
from dsh_persistence._harness_stores import open_backend
from dsh_persistence._plugin import PersistencePlugin

if TYPE_CHECKING:
    from dsh_persistence._backend import LoadedSession, SessionBackend, SessionInfo, StoredTail
    from dsh_persistence._jsonl import JsonlBackend
    from dsh_persistence._postgres import PostgresBackend
    from dsh_persistence._records import check_repaired, close_turn, read_log
    from dsh_persistence._service import StoredSessions
    from dsh_persistence._settings import (
        ENV_DIRECTORY,
        PersistenceSettings,
        default_directory,
    )
    from dsh_persistence._sqlite import SqliteBackend

__all__ = [
    "ENV_DIRECTORY",
    "JsonlBackend",
    "LoadedSession",
    "PersistenceError",
    "PersistencePlugin",
    "PersistenceSettings",
    "PostgresBackend",
    "SessionBackend",
    "SessionConflictError",
    "SessionCorruptError",
    "SessionDeletedError",
    "SessionFormatError",
    "SessionInUseError",
    "SessionInfo",
    "SessionStoreUnusableError",
    "SqliteBackend",
    "StoredSessions",
    "StoredTail",
    "check_repaired",
    "close_turn",
    "default_directory",
    "open_backend",
    "plugin",
    "read_log",
]

_LAZY = {
    "LoadedSession": "dsh_persistence._backend",
    "SessionBackend": "dsh_persistence._backend",
    "SessionInfo": "dsh_persistence._backend",
    "StoredTail": "dsh_persistence._backend",
    "JsonlBackend": "dsh_persistence._jsonl",
    "SqliteBackend": "dsh_persistence._sqlite",
    "PostgresBackend": "dsh_persistence._postgres",
    "check_repaired": "dsh_persistence._records",
    "close_turn": "dsh_persistence._records",
    "read_log": "dsh_persistence._records",
    "StoredSessions": "dsh_persistence._service",
    "ENV_DIRECTORY": "dsh_persistence._settings",
    "PersistenceSettings": "dsh_persistence._settings",
    "default_directory": "dsh_persistence._settings",
}


if not TYPE_CHECKING:  # a type checker sees the imports above: a typo is an error

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'dsh_persistence' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


#: The instance the entry point stands for; the names below are its hook impls.
plugin = PersistencePlugin()

register_settings = plugin.register_settings
register_secrets = plugin.register_secrets
register_commands = plugin.register_commands
harness_started = plugin.harness_started
harness_stopping = plugin.harness_stopping
session_event = plugin.session_event
session_flush = plugin.session_flush
session_persistence = plugin.session_persistence
agent_created = plugin.agent_created
agent_disposed = plugin.agent_disposed
