"""What the realmodel tests share: the server under test and the request pieces."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

import httpx

#: The context window the server is started with (an over-long prompt test needs it).
CONTEXT = 2048


@dataclass(frozen=True)
class Peer:
    """The server under test: ``url`` is its root, ``base_url`` the API root (``/v1``)."""

    url: str

    @property
    def base_url(self) -> str:
        return self.url + "/v1"


def load_script() -> ModuleType:
    """``dsh.llm.llama``: builds, fetches, starts and stops the local server."""
    from dsh.llm import llama

    return llama


@dataclass(frozen=True)
class Event:
    """One server-sent event: its ``event:`` name (if any) and its ``data:``."""

    event: str | None
    data: str


def sse_events(response: httpx.Response) -> Iterator[Event]:
    """The events of a ``text/event-stream`` response, read independently of dsh's own
    parser: ``field: value`` lines, a blank line ends an event. llama-server sends only
    ``event`` and ``data`` fields."""
    name: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if not line:
            if data:
                yield Event(name, "\n".join(data))
            name, data = None, []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line.startswith("event:"):
            name = line[6:].strip()
