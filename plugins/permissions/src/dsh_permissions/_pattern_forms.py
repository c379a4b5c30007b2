"""Rule patterns written in a form that could never match what they say.

A command pattern is matched against the text of each simple command of a line on its
own (``_commands``), so one holding a shell operator between commands (``cd / && rm
*``, ``a; b``, ``a | b``, a trailing ``&``) or an output redirection (``rm * >
/dev/null``: each output redirection is a part of its own, ``> path``) matches no
command: its text never holds them (but for words quoted in the command, which is not
what such a rule means); so does one glued on both sides (``cd /;rm *``,
``make&&rm *``, ``true||rm *``). A ``;``, ``&&`` or ``||`` glued between two ``*``
(``sh -c *;*``) and a glued ``|`` (``grep a|b *``) match such quoted words (``sh -c
'a;rm x'``) and are kept. An input redirection stays in its command's text (``cat <
.env``), a ``;`` standing alone is ``find -exec``'s, and ``>`` leading the pattern is
the redirection form (``> /etc/*``): those are kept.

Claude Code's prefix form ``Bash(rm:*)`` is not dsh's: ``*`` is any text, so it
matches only a command starting ``rm:``, never ``rm -rf src``. In a deny or ask rule it
is refused (``prefix_problem``), saying to write the prefix followed directly by ``*``
(``bash(rm*)``, ``bash(npm run deploy*)``: it matches ``rm -rf src`` and ``npm run
deploy:prod``); in an allow rule it is only warned about. A literal ``:`` then any text
is written ``:**`` (``bash(docker run ubuntu:**)``), which is kept.

A backslash escapes nothing in a command pattern either (``backslash_problem``):
``bash(rm \\*)`` is ``rm \\`` then any text, never ``rm *``, which a command's text
spells as the shell runs it (re-quoted, ``rm '*'``; deny and ask rules also see it
unquoted, ``rm *``). It is refused in a deny or ask rule and warned about in an allow
rule.

A path pattern's ``{a,b}`` is expanded (``_path_braces``); a backslash escapes nothing
there (fnmatch takes it as itself), so ``read(\\.env)`` names a file called ``\\.env``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["backslash_problem", "claude_prefix", "prefix_problem", "text_pattern_problem"]

#: Claude Code's ``prefix:*``: a ``:*`` ending the pattern, right after a word, and no
#: other ``*`` (``scp * host:*`` is dsh's own); ``:**`` is dsh's for a literal ``:``
_CLAUDE: Final = re.compile(r"([^*\s][^*]*?):\*")
#: operators between commands: ``&&``, ``||`` or ``;`` with a space (or the end) on a
#: side or glued on both (``cd /;rm *``, ``make&&rm *``), ``|`` and ``&`` standing
#: alone; ``;`` standing alone is ``find``'s (``find . -exec rm {} ;``), and one glued
#: between two ``*`` a quoted word's (``sh -c *;*``, ``sh -c *&&*``)
_BETWEEN: Final = re.compile(
    r"(?<=\s)(&&|\|\|)|(&&|\|\|)(?=\s|$)|(?:^|\s)(\|&?|&)(?:\s|$)"
    r"|(?<=\S);(?=\s|$)|(?<=\s);(?=\S)"
    r"|(?<=[^\s*])(&&|\|\||;)(?=\S)|(?<=\S)(&&|\|\||;)(?=[^\s*])"
)
#: an output redirection after the start: ``>``, ``>>``, ``2>``, ``&>``, ``>|`` at a
#: word's start
_OUTPUT: Final = re.compile(r"(?:^|\s)(?:[0-9]*|&)(>>?|>\|)")


def claude_prefix(pattern: str) -> str | None:
    """The command prefix of a pattern in Claude Code's ``prefix:*`` form, or None."""
    found = _CLAUDE.fullmatch(pattern.strip())
    return None if found is None else found.group(1).strip()


def prefix_problem(tool: str, pattern: str) -> tuple[str, str] | None:
    """(what is wrong, a did-you-mean) of a pattern in Claude Code's ``prefix:*`` form,
    or None."""
    if (prefix := claude_prefix(pattern)) is None:
        return None
    return (
        f"ends in ':*', which is not Claude Code's prefix form here: '*' is any text, so "
        f"it matches only a command starting {prefix + ':'!r} ({prefix + ':x'!r}, not "
        f"{prefix + ' x'!r})",
        f"; did you mean {tool + '(' + prefix + '*)'!r}? (the prefix followed by any "
        f"text; a literal ':' then any text is {tool + '(' + prefix + ':**)'!r})",
    )


def text_pattern_problem(tool: str, pattern: str) -> tuple[str, str] | None:
    """(what is wrong, a did-you-mean) of a command pattern that matches no command,
    or None."""
    text = pattern.strip()
    found = _BETWEEN.search(text)
    operator = None if found is None else found.group(0).strip()
    if operator is None and not text.startswith(("> ", ">\t")):
        output = _OUTPUT.search(text)
        operator = None if output is None else output.group(1)
    if operator is None:
        return None
    redirect = ">" in operator
    if "\\;" in text:  # find -exec's \; as written in a shell
        advice = (
            "; write find's ';' without the backslash, standing alone: "
            f"{tool}(find * -exec rm {{}} ;)"
        )
    else:
        advice = "; write one rule per command"
    return (
        f"holds the shell operator {operator!r}: each part of a line is matched on its "
        "own (a simple command, or an output redirection), so it would match no command",
        advice
        + (
            f", and an output redirection as {tool}(> path) (every one, '>>' and '2>' "
            "too, is matched as '> path')"
            if redirect
            else ""
        ),
    )


def backslash_problem(tool: str, pattern: str) -> tuple[str, str] | None:
    """(what is wrong, what to write) of a command pattern holding a backslash, or None."""
    if "\\" not in pattern:
        return None
    return (
        "has a backslash, but a backslash escapes nothing in a command pattern ('*' is "
        "any text, nothing else is special): a command is matched as the shell runs it, "
        "unquoted, so a backslash in a pattern matches only a backslash a word holds "
        f"(printf 'a\\nb'), and {tool}(rm \\*) would match only an rm whose word begins "
        "with a backslash, never rm *",
        f"; for a backslash a word holds write '*' in its place ({tool}(printf *a*nb*)); "
        f"for an escape leave it out ({tool}(rm *) also covers rm '*' and rm \\*)",
    )
