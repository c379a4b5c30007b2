"""The first plugin a user writes, from README.md's "Writing a plugin" and
writing-plugins.md's "The hook": the module as shown follows writing-plugins.md's own
rule, "Keep the import cheap" (importing a message class at the top of a plugin "adds
pydantic to every command"), and registers as a plugin."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from docs_files import ROOT

# The plugin module is written to a directory of its own, imported in a new process
# as dsh imports an entry point, and registered; what it imported is printed.
PROGRAM = textwrap.dedent(
    """\
    import importlib, sys
    sys.path.insert(0, sys.argv[1])
    from dsh.plugins import create_plugin_manager
    module = importlib.import_module("dsh_myplugin")
    print(sorted(m for m in sys.modules if m.split(".")[0] == "pydantic")[:3])
    create_plugin_manager([("myplugin", module)], load_entry_points=False)
    """
)


def module_block(doc: str, after: str) -> str:
    """The first ```python block of ``doc`` after the text ``after``."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    rest = text[text.index(after) :]
    return rest[rest.index("```python\n") + len("```python\n") :].split("```", 1)[0]


@pytest.mark.parametrize(
    ("doc", "after"),
    [("README.md", "## Writing a plugin"), ("docs/writing-plugins.md", "## The hook")],
)
def test_the_first_plugin_of_the_docs_imports_no_pydantic(
    doc: str, after: str, tmp_path: Path
) -> None:
    """README.md's example imported `AssistantMessage` at its top, which loads pydantic
    for `dsh --help` and every other command: the thing writing-plugins.md says not to
    do (it names examples/dsh-shout's `if TYPE_CHECKING:` as the way)."""
    package = tmp_path / "dsh_myplugin"
    package.mkdir()
    (package / "__init__.py").write_text(module_block(doc, after), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n", f"{doc}: importing the plugin imported {done.stdout}"
