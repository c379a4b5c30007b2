"""``${...}`` expansions that run or evaluate code held in a variable (bash 5.2), which
the splitter (``_shell``) refuses as syntax it does not model:

- ``${x@P}``: prompt expansion runs the ``$(...)`` and backquotes in x's value
  (``x='$(cat .env)'; echo ${x@P}``);
- ``${!x}``: indirection, whose name may be ``a[$(...)]`` (the subscript runs); the
  listings ``${!x[@]}``, ``${!prefix*}`` and ``${!#}`` are plain;
- an offset or length naming a variable (``${y:x}``, ``${y:1:x}``, ``${@:x}``): bash
  evaluates it as arithmetic, and x's value may hold ``a[$(...)]``. A number
  (``${y:1}``, ``${y: -2:1}``) and ``${y:-default}``, ``${y:=v}``, ``${y:+v}``,
  ``${y:?msg}`` are plain;
- zsh's flags, ``${(e)x}`` (runs the substitutions x's value holds), ``${(P)x}``
  (indirection): a ``${(`` (bash refuses it);
- a subscript that is not a number, ``@`` or ``*`` (``${y[x]}``, ``${y[$i]}``,
  ``${y[i+1]}``): bash evaluates an indexed array's subscript as arithmetic, and an
  assignment in it sets a variable (``x=HOME=5; : ${BASH_VERSINFO[x]}`` sets ``HOME``).
  Whether ``y`` is an associative array (whose key is plain text) is not known here.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["evaluated"]

#: a parameter with an optional subscript, then what follows it
_PARAMETER: Final = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(\[[^\]]*\])?")
_LISTING: Final = re.compile(r"![A-Za-z_][A-Za-z0-9_]*(\[[@*]\]|[@*])?|!#")
_NAMED: Final = re.compile(r"[A-Za-z_]")
_PLAIN_SUBSCRIPT: Final = re.compile(r"\[(-?[0-9]+|[@*])\]")


def evaluated(body: str) -> str | None:
    """Why the expansion ``${body}`` runs or evaluates code (see the module), or None."""
    if "@P" in body:
        return "${...@P} runs the command substitutions held in the variable"
    if body.startswith("("):  # bash refuses it; zsh's ${(e)x} runs what x holds
        return "${(FLAGS)...} (zsh's flags: (e) runs the substitutions the value holds)"
    if body.startswith("!"):
        if _LISTING.fullmatch(body) and (body == "!#" or body.endswith(("]", "@", "*"))):
            return None
        return "${!...} (indirection) evaluates the subscript of the name the variable holds"
    found = _PARAMETER.match(body)
    if found is None:
        return None
    if found.group(3) and not _PLAIN_SUBSCRIPT.fullmatch(found.group(3)):
        return "${NAME[SUBSCRIPT]} evaluates the subscript as arithmetic"
    rest = body[found.end() :]
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "+", "?") and _NAMED.search(rest):
        return "${...:OFFSET} evaluates a variable's value as arithmetic"
    return None
