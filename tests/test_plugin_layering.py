"""The plugins are distributions of their own, installed against ``dsh-core>=0.1``:
they use the core's public modules only (a private one may change in any release),
as a third party's plugin must. Three private imports crept in this way (a YAML-kind
wording, a value quoter, the terminal escaping): the first two belong to the core's own
mechanisms, the last is public as ``dsh.commands.for_terminal``."""

from __future__ import annotations

import ast
from pathlib import Path

PLUGINS = Path(__file__).parents[1] / "plugins"


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [f"{path.name}:{node.lineno}: {n}" for n in names if n.startswith("dsh._")]
    return found


def test_the_plugins_import_no_private_module_of_the_core() -> None:
    sources = sorted(PLUGINS.glob("*/src/**/*.py"))
    assert len(sources) > 30
    assert [hit for source in sources for hit in _private_imports(source)] == []
