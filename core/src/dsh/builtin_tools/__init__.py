"""The built-in tools, as a core default plugin (``dsh.builtin_tools``) on the same
``register_tools`` hook a third-party plugin uses.

========  ========  =========  ============  ==========================================
tool      mutating  path_args  command_args  what it does
========  ========  =========  ============  ==========================================
read      no        path                     text file lines with numbers, capped
write     yes       path                     write a whole file, creating parents
edit      yes       path                     exact-match replace, unique unless told
ls        no        path                     list one directory
glob      no        path                     find paths by glob pattern
grep      no        path                     search contents with a Python regex
bash      yes                    command       run a command in its own process group
========  ========  =========  ============  ==========================================

File tools are confined to the workspace and the agent option ``extra_roots``
(see ``_paths``); ``bash`` runs in the workspace but is not confined: policy for
commands belongs to a permissions plugin, which reads ``mutating``, ``path_args``,
``command_args`` and ``reads`` from each tool (``write``, ``ls`` and ``glob`` declare
``reads=False``: they show no file's contents). docs/tools.md has the details.

A plugin that registers a tool under one of these names replaces the built-in one.

The tool modules (and pydantic, anyio) are imported when tools are registered, not when
the plugin is loaded, so ``dsh --help`` and ``dsh plugins`` stay fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.tools import Tool

__all__ = ["builtin_tools", "register_tools"]


def builtin_tools() -> tuple[Tool, ...]:
    """Every built-in tool, in the order the model is told about them."""
    from dsh.builtin_tools._bash import bash
    from dsh.builtin_tools._files import edit, read, write
    from dsh.builtin_tools._search import glob, grep, ls

    return (read, write, edit, ls, glob, grep, bash)


@hookimpl(trylast=True)
def register_tools(register: Callable[..., Any]) -> None:
    """Register every built-in tool whose name no other plugin has taken: core defaults
    register last, so a plugin's ``bash`` (say, a sandboxed one) replaces the built-in."""
    from dsh.errors import DshError

    for built_in in builtin_tools():
        try:
            register(built_in)
        except DshError:  # the name is taken (our tools are valid Tools)
            continue
