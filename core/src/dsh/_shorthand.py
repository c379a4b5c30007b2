"""Where the base URL starts in the ``-m`` shorthand ``provider:model@base_url``: at the
first ``@`` followed by ``http://`` or ``https://`` (a model's name may hold ``@`` and
``:``, as ``claude-3-5-sonnet@20240620`` does). One rule for the two readers of a
``-m``: ``dsh.llm.providers`` builds the model from it, and the ``dsh`` command's error
path (``dsh._cli_keys``) finds the keys written into it, without importing httpx."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["split_base_url"]

_URL_START: Final = re.compile(r"@(?=https?://)")


def split_base_url(text: str) -> tuple[str, str | None]:
    """``text`` before its first ``@http://`` or ``@https://``, and the URL after that
    ``@`` (None without one): ``"p:m@http://h/v1"`` -> ``("p:m", "http://h/v1")``. The
    URL is all the rest, spaces and further ``@http://`` included."""
    head, *url = _URL_START.split(text, maxsplit=1)
    return head, (url[0] if url else None)
