"""The plugins are distributions of their own, installed against ``dsh-core>=0.1``:
they use the core's public modules only (a private one may change in any release),
as a third party's plugin must. Three private imports crept in this way (a YAML-kind
wording, a value quoter, the terminal escaping): the first two belong to the core's own
mechanisms, the last is public as ``dsh.commands.for_terminal``. Nor does the core import a plugin:
it reaches one through hooks only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).parents[1] / "plugins"
CORE = Path(__file__).parents[1] / "core" / "src" / "dsh"


def _private_imports(path: Path, prefix: str = "dsh._") -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [f"{path.name}:{node.lineno}: {n}" for n in names if n.startswith(prefix)]
    return found


def test_the_plugins_import_no_private_module_of_the_core() -> None:
    sources = sorted(PLUGINS.glob("*/src/**/*.py"))
    assert len(sources) > 30
    assert [hit for source in sources for hit in _private_imports(source)] == []


@pytest.mark.parametrize("package", ["dsh_compaction", "dsh_permissions", "dsh_persistence"])
def test_the_core_imports_no_plugins_module(package: str) -> None:
    """A plugin adds to the core through hooks (chat's /compact through
    register_chat_commands; dsh-permissions asks the terminal through the core's
    tools_approval), never by the core importing it."""
    sources = sorted(CORE.glob("**/*.py"))
    assert len(sources) > 50
    assert [hit for source in sources for hit in _private_imports(source, package)] == []
