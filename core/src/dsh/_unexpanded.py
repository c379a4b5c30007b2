"""The variables written into dsh.yml, which it does not expand: a value holding one
would be used as written (``Bearer ${GW_TOKEN}`` sent as a gateway's token, a host
named ``$HOST``), so the checks of ``dsh._model_values`` refuse it, saying where the
value should come from instead. A ``$`` means other things in each place, so each has
its own rule for what is a variable:

- ``base_url`` (``VARIABLE``): ``$NAME`` or ``${NAME}`` anywhere before the query,
  ``${NAME}`` in it too; a query's ``$top=10`` is the server's. ``api_key_env`` given
  as ``$NAME`` (a ``VARIABLE`` whole) is told to drop the ``$``.
- ``headers`` (``HEADER_VARIABLE``): ``${NAME}`` anywhere, ``$NAME`` as a whole word
  only (``Bearer $TOKEN``): a header's text may hold a ``$`` (``$Version=1``, a
  cookie's attribute; ``$5 off``).
- dsh-persistence's ``url`` (``dsh_persistence._settings._VARIABLE``, kept with the
  plugin, which uses dsh's public API only): ``${NAME}`` anywhere, ``$NAME`` as the
  whole value only: a password in the URL may hold a ``$`` (``pa$word``).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["HEADER_VARIABLE", "VARIABLE"]

#: ``$NAME`` or ``${NAME}`` (the name in group 1 or 2): a shell's variable.
VARIABLE: Final = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
#: A variable in a header's value: ``${NAME}`` anywhere, ``$NAME`` as a whole word.
HEADER_VARIABLE: Final = re.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|(?<!\S)\$[A-Za-z_][A-Za-z0-9_]*(?!\S)"
)
