"""docs/testing.md's python examples run for real, as a plugin author would copy them.

Each ```python block is executed as a module of its own. The prose refers later
examples to earlier ones ("``Tagger`` is the plugin of the first example"), so a block
starts with what the earlier blocks of the page defined, except their tests. Then:

- every ``async def test_...`` it defines is awaited under anyio, with its arguments
  taken from the pytest fixtures of that name (``dsh.testing``'s, as the page sets up);
- a block defining hook impls and no test is a plugin: it is registered in a started
  harness, and each model it registers answers a turn that must complete;
- what is left (``pytest_plugins = [...]``) is executed, and the plugins it names
  must import.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.harness import Harness
from dsh.testing import run_turn

DOC = Path(__file__).parents[2] / "docs" / "testing.md"
FENCE = re.compile(r"^```\s*(\w*)")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    code: str

    @property
    def defines(self) -> list[str]:
        """The names its top level defines or imports, tests left out."""
        names: list[str] = []
        for node in ast.parse(self.code).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names += [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        return [name for name in names if not name.startswith("test_")]

    @property
    def tests(self) -> list[str]:
        return [
            node.name
            for node in ast.parse(self.code).body
            if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
            and node.name.startswith("test_")
        ]


def python_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    opened: tuple[int, str, list[str]] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if opened is None and match:
            opened = (number, match[1], [])
        elif opened is not None and line.startswith("```"):
            if opened[1] == "python":
                blocks.append(Block(opened[0], "\n".join(opened[2]) + "\n"))
            opened = None
        elif opened is not None:
            opened[2].append(line)
    assert opened is None, f"the code block at line {opened[0]} is never closed"
    return blocks


BLOCKS = python_blocks(DOC.read_text(encoding="utf-8"))


def run_block(index: int) -> dict[str, Any]:
    """Execute block ``index`` in a fresh module that starts with the definitions of
    the blocks before it (their tests left out); return its namespace."""
    inherited: dict[str, Any] = {}
    for earlier in BLOCKS[:index]:
        namespace = _execute(earlier, inherited)
        inherited.update({name: namespace[name] for name in earlier.defines if name in namespace})
    return _execute(BLOCKS[index], inherited)


def _execute(block: Block, inherited: dict[str, Any]) -> dict[str, Any]:
    module = types.ModuleType(f"testing_md_line_{block.line}")
    module.__dict__.update(inherited)
    # in sys.modules while it runs, as an imported module is: pydantic resolves a model's
    # annotations (``PositiveInt``) through the module its class names
    sys.modules[module.__name__] = module
    try:
        exec(compile(block.code, f"{DOC}:{block.line}", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def block_id(block: Block) -> str:
    return f"testing.md:{block.line}"


CASES = [(block, name) for block in BLOCKS for name in block.tests]
OTHERS = [block for block in BLOCKS if not block.tests]


def test_the_page_has_the_examples_this_file_runs() -> None:
    # a broken fence parser must not turn into "nothing to run"
    lines = DOC.read_text(encoding="utf-8").splitlines()
    fences = sum(1 for line in lines if line.startswith("```python"))
    assert len(BLOCKS) == fences >= 4
    assert len(CASES) >= 2 and len(OTHERS) >= 2


@pytest.mark.parametrize(
    ("block", "name"), CASES, ids=[f"{block_id(b)}:{name}" for b, name in CASES]
)
def test_an_example_test_passes(block: Block, name: str, request: pytest.FixtureRequest) -> None:
    namespace = run_block(BLOCKS.index(block))
    function = namespace[name]
    assert inspect.iscoroutinefunction(function), f"{name} is not async def"
    arguments = {
        parameter: request.getfixturevalue(parameter)
        for parameter in inspect.signature(function).parameters
    }
    anyio.run(functools.partial(function, **arguments))


@pytest.mark.parametrize("block", OTHERS, ids=[block_id(b) for b in OTHERS])
def test_an_example_without_tests_runs(block: Block, tmp_path: Path) -> None:
    namespace = run_block(BLOCKS.index(block))
    hooks = {
        name: namespace[name] for name in block.defines if hasattr(namespace[name], "dsh_impl")
    }
    if hooks:
        plugin = types.ModuleType(f"testing_md_plugin_{block.line}")
        plugin.__dict__.update(hooks)
        anyio.run(_answers_a_turn_with_each_model, plugin, tmp_path)
    else:
        assert "pytest_plugins" in namespace, "an example that neither tests nor plugs in"
        for name in namespace["pytest_plugins"]:
            importlib.import_module(name)


@pytest.mark.parametrize(
    "block",
    [b for b in OTHERS if "@hookimpl" in b.code],
    ids=[block_id(b) for b in OTHERS if "@hookimpl" in b.code],
)
def test_a_plugin_example_is_cheap_to_import(block: Block) -> None:
    """A plugin copied from the page is imported by every `dsh` command, `dsh --help`
    included: its top level must not load pydantic (writing-plugins.md, "Import heavy
    things lazily"; dsh.testing loads it, so the page imports it inside the hook)."""
    probe = block.code + "\nimport sys\nprint(sorted(m for m in sys.modules if m == 'pydantic'))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", f"testing.md:{block.line} imports pydantic at its top"


async def _answers_a_turn_with_each_model(plugin: types.ModuleType, workspace: Path) -> None:
    """The example as ``dsh -m NAME run`` uses it: in a harness, a turn per model."""
    async with Harness(
        plugins=[("example", plugin)], load_entry_points=False, workspace=workspace
    ) as harness:
        names = [n for n in harness.models.names() if harness.models.origin(n) == "example"]
        for name in names:
            agent = await harness.agents.create(f"agent-{name}", options={"model": name})
            events = await run_turn(agent, "go")
            assert [e.type for e in events][-1] == "turn/end"
            assert events[-1].data["reason"] == "completed", events
            results = [e for e in events if e.type == "tool/result"]
            assert not any(e.data.get("is_error") for e in results), results
