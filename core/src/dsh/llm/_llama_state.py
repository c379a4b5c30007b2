"""What ``python -m dsh.llm.llama start`` records of the server it leaves running:
``server.json`` in the cache, readable by its owner only, holding no secret.

The options ``start`` was given are kept as a salted digest, to tell whether a later
``start`` asks for the same server, and as shown to people: the llama-server options
(after ``--``) read "other llama-server options" when one of them holds a secret
(``--api-key sk-...``), which neither the file nor a message may show.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: llama-server options whose value is (or names) a secret.
SECRET_OPTIONS: Final = frozenset(
    {"--api-key", "--api-key-file", "--ssl-key-file", "--hf-token", "-hft"}
)
HIDDEN: Final = "other llama-server options"


def shown(options: Sequence[str]) -> list[str]:
    """``options`` as a message may show them (see the module)."""
    options = list(options)
    if "--" not in options:
        return options
    at = options.index("--") + 1
    if any(option.split("=", 1)[0] in SECRET_OPTIONS for option in options[at:]):
        return [*options[:at], HIDDEN]
    return options


def _digest(options: Sequence[str], salt: str) -> str:
    return hmac.new(salt.encode(), json.dumps(list(options)).encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Record:
    """A server ``start`` left running; ``options`` None: not recorded (an earlier dsh)."""

    pid: int
    base_url: str
    options: list[str] | None = None  # as shown
    salt: str = ""
    digest: str = ""

    def serves(self, options: Sequence[str]) -> bool:
        """Whether it was started with ``options``."""
        return hmac.compare_digest(_digest(options, self.salt), self.digest)


def read(path: Path) -> Record | None:
    try:
        state = json.loads(path.read_text())
        pid, base_url = int(state["pid"]), str(state["base_url"])
        options, salt, digest = state.get("options"), state.get("salt"), state.get("digest")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    listed = isinstance(options, list) and all(isinstance(o, str) for o in options)
    if not (listed and isinstance(salt, str) and isinstance(digest, str)):
        return Record(pid, base_url)
    return Record(pid, base_url, options, salt, digest)


def write(path: Path, pid: int, base_url: str, options: Sequence[str]) -> None:
    """Record the server at ``path``: mode 0600, replaced at once (never half written)."""
    salt = secrets.token_hex(16)
    state = {"pid": pid, "base_url": base_url, "options": shown(options)}
    state |= {"salt": salt, "digest": _digest(options, salt)}
    handle, name = tempfile.mkstemp(prefix=".server-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:  # mkstemp: 0600
            out.write(json.dumps(state))
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
