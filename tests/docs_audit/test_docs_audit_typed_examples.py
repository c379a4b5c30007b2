"""The examples of the docs that call a hook through the relay with a placeholder agent
(``dsh_pm.relay.agent_request(None, ...)``, ``tools_execute(agent=None, ...)``) or read
a plugin's settings through ``agent.harness``, checked by ``mypy --strict`` as a plugin
author who types them would: each parameter annotated by its name as the hook gives it
(``agent: Agent``, ``request: ModelRequest``, ``dsh_pm: PluginManager`` ...).

Before: the relay typed ``agent: Agent`` while testing.md passed ``None`` (which the core
supports: the executor passes a call on for an agent without tools), and ``agent.harness``
is ``Harness | None``, so ``agent.harness.config.section(...)`` was a mypy error.

Also: a name ``dsh`` (or a first-party plugin's package) does not export is a mypy
error, its lazy names typed as what they are. And the examples reading ``agent.tools``
or ``agent.workspace`` (which hooks.md lists among an agent's attributes) were mypy
errors: ``"Agent" has no attribute "tools"``.

Left out: ``name-defined`` and ``import-not-found`` (a block uses the plugin of an earlier
block, ``Tagger``, ``dsh_myplugin``), and the annotations the test adds stand in for the
author's.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_files import ROOT

# mypy is in the typecheck group: `nox -s typecheck` runs this test, the tests sessions
# (no mypy installed) skip it
pytest.importorskip("mypy", reason="mypy is not installed (nox -s typecheck runs this)")

#: Blocks holding one of these are checked (``agent.tools``, ``agent.workspace``,
#: ``agent.call_not_run``: hooks.md lists them among the ``Agent``'s, which lacked them).
MARKERS = (
    "relay.agent_request(",
    "relay.tools_execute(",
    "harness.config.section(",
    "agent.tools.",
    "agent.workspace",
    "agent.call_not_run(",
)
DOCS = ("docs/writing-plugins.md", "docs/testing.md", "docs/hooks.md")
#: A parameter's type by its name, as the hooks and the dsh.testing fixtures give it.
TYPES = {
    "agent": "Agent",
    "request": "ModelRequest",
    "call": "ToolCall",
    "decision": "ContinuationDecision",
    "harness": "Harness",
    "message": "AssistantMessage",
    "turn": "int",
    "step": "int",
    "register": "Callable[..., None]",
    "dsh_pm": "PluginManager",
    "dsh_register": "Callable[..., Any]",
    "dsh_hook_recorder": "HookRecorder",
    "tmp_path": "Path",
}
HEADER = (
    "from pathlib import Path\n"
    "from typing import Any, Callable\n"
    "from dsh import AssistantMessage, ContinuationDecision, ModelRequest, ToolCall\n"
    "from dsh.agent import Agent\n"
    "from dsh.harness import Harness\n"
    "from dsh.plugins import PluginManager\n"
    "from dsh.testing import HookRecorder\n"
)


def blocks() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for number, block in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            if any(marker in block for marker in MARKERS):
                found.append((f"{doc}#{number}", block))
    return found


def typed(source: str) -> str:
    """``source`` with each unannotated parameter typed by its name (else ``Any``) and
    each function returning ``Any`` unless it says."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for argument in arguments:
                if argument.annotation is None and argument.arg != "self":
                    hint = TYPES.get(argument.arg, "Any")
                    argument.annotation = ast.parse(hint, mode="eval").body
            if node.returns is None:
                node.returns = ast.Name("Any")
    return HEADER + ast.unparse(tree) + "\n"


def mypy(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` run in ``cwd`` with ``arguments``."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "MYPYPATH": ""},
    )


def test_the_typed_examples_pass_mypy_strict(tmp_path: Path) -> None:
    found = blocks()
    assert len(found) >= 4, [name for name, _ in found]
    assert {name.split("#")[0] for name, _ in found} == set(DOCS)
    modules = {}
    for number, (name, source) in enumerate(found):
        module = tmp_path / f"example_{number}.py"
        module.write_text(typed(source), encoding="utf-8")
        modules[module.name] = name
    done = mypy(  # one run for all: each run costs mypy's start (~10 s)
        tmp_path,
        "--disable-error-code=name-defined",
        "--disable-error-code=import-not-found",
        *modules,
    )
    problems = [
        f"{modules.get(line.split(':')[0], '?')}: {line}"
        for line in done.stdout.splitlines()
        if ": error:" in line
    ]
    assert problems == [] and done.returncode == 0, "\n".join(problems) or done.stderr


#: packages whose public names are imported on first use (a module ``__getattr__``)
LAZY_PACKAGES = ("dsh", "dsh_compaction", "dsh_permissions", "dsh_persistence")


def test_a_name_a_package_does_not_export_is_a_mypy_error(tmp_path: Path) -> None:
    """The lazy names of ``dsh`` (``Harness``, ``ModelRequest`` ...) and of the
    first-party plugins are typed as what they are, and a typo is an error. Before: each
    package's module ``__getattr__`` (which imports them on first use) was seen by mypy,
    so ``from dsh import Anything`` was ``Any`` and passed ``--strict``."""
    found = [name for name in LAZY_PACKAGES if importlib.util.find_spec(name) is not None]
    assert "dsh" in found
    for package in found:
        (tmp_path / f"names_{package}.py").write_text(
            f"from {package} import NoSuchName\n", encoding="utf-8"
        )
    (tmp_path / "lazy.py").write_text(
        "from dsh import ModelRequest\nwrong: int = ModelRequest()\n", encoding="utf-8"
    )
    done = mypy(tmp_path, "lazy.py", *(f"names_{package}.py" for package in found))
    errors = sorted(line for line in done.stdout.splitlines() if ": error:" in line)
    assert errors == [
        "lazy.py:2: error: Incompatible types in assignment (expression has type "
        '"ModelRequest", variable has type "int")  [assignment]',
        *(
            f'names_{package}.py:1: error: Module "{package}" has no attribute '
            '"NoSuchName"  [attr-defined]'
            for package in found
        ),
    ], done.stdout + done.stderr
