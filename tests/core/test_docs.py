"""The docs are tested: docs/hooks.md must describe exactly the hooks dsh.hookspecs
declares, with their argument names and call styles, and every python example must
compile. Each hook is its own test case, so a failure names the hook."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from dsh import hookspecs
from dsh.cli import BUILT_IN
from dsh.config import CORE_KEYS, load_config
from dsh.plugins import create_plugin_manager

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
HOOKS_MD = DOCS / "hooks.md"
EXAMPLE_DOCS = (HOOKS_MD, DOCS / "writing-plugins.md")

HOOK_HEADING = re.compile(r"## `(?P<name>\w+)\((?P<args>[\w, ]*)\)`")
CALL_STYLE = re.compile(r"\*\*Call style:\*\* (?P<style>\S+)")


@dataclass(frozen=True)
class Block:
    """A fenced code block: where it starts (1-based line of the fence) and its text."""

    path: Path
    line: int
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass
class Section:
    """A level-1 or level-2 heading with its prose lines and code blocks."""

    heading: str
    prose: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


def parse(path: Path) -> list[Section]:
    """Split a markdown file at ``#``/``##`` headings, ignoring ``#`` inside code."""
    sections = [Section(heading="")]
    fence: tuple[int, str, list[str]] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None and line.startswith("```"):
            fence = (number, line[3:].strip(), [])
        elif fence is not None and line.startswith("```"):
            start, lang, code = fence
            sections[-1].blocks.append(Block(path, start, lang, "\n".join(code) + "\n"))
            fence = None
        elif fence is not None:
            fence[2].append(line)
        elif re.match(r"#{1,2} ", line):
            sections.append(Section(heading=line.rstrip()))
        else:
            sections[-1].prose.append(line)
    assert fence is None, f"{path.name}: code block at line {fence[0]} is never closed"
    return sections


def documented_hooks() -> dict[str, list[Section]]:
    found: dict[str, list[Section]] = {}
    for section in parse(HOOKS_MD):
        match = HOOK_HEADING.fullmatch(section.heading)
        if match:
            found.setdefault(match["name"], []).append(section)
    return found


@functools.cache
def spec_args() -> dict[str, tuple[str, ...]]:
    """Every core hookspec and its argument names, in spec order."""
    pm = create_plugin_manager(load_entry_points=False)
    specs = {}
    for name in dir(hookspecs):
        if pm.parse_hookspec_opts(hookspecs, name) is not None:
            spec = getattr(pm.hook, name).spec
            specs[name] = (*spec.argnames, *spec.kwargnames)
    return specs


def section_of(hook: str) -> Section:
    if hook not in spec_args():
        pytest.fail(f"docs/hooks.md documents {hook!r}, which is not a hookspec")
    sections = documented_hooks().get(hook, [])
    if not sections:
        pytest.fail(f"hook {hook!r} has no section ## `{hook}(...)` in docs/hooks.md")
    if len(sections) > 1:
        pytest.fail(f"hook {hook!r} has {len(sections)} sections in docs/hooks.md")
    return sections[0]


def hookimpls(code: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """(hook name, argument names, optionalhook) of each ``@hookimpl`` in ``code``."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            target = call.func if call else deco
            if not (isinstance(target, ast.Name) and target.id == "hookimpl"):
                continue
            opts = {
                kw.arg: kw.value.value
                for kw in (call.keywords if call else ())
                if isinstance(kw.value, ast.Constant)
            }
            name = str(opts.get("specname", node.name))
            args = tuple(a.arg for a in node.args.args if a.arg != "self")
            found.append((name, args, opts.get("optionalhook") is True))
    return found


ALL_HOOKS = sorted(set(spec_args()) | set(documented_hooks()) | set(hookspecs.CALL_STYLES))
PYTHON_BLOCKS = [
    block
    for path in EXAMPLE_DOCS
    for section in parse(path)
    for block in section.blocks
    if block.lang == "python"
]


@pytest.mark.parametrize("hook", ALL_HOOKS)
def test_signature_matches_spec(hook: str) -> None:
    match = HOOK_HEADING.fullmatch(section_of(hook).heading)
    assert match is not None
    documented = tuple(arg.strip() for arg in match["args"].split(",") if arg.strip())
    assert documented == spec_args()[hook], f"docs/hooks.md heading of {hook} is out of date"


@pytest.mark.parametrize("hook", ALL_HOOKS)
def test_call_style_matches_spec(hook: str) -> None:
    section = section_of(hook)
    styles = [m["style"] for line in section.prose if (m := CALL_STYLE.fullmatch(line))]
    assert len(styles) == 1, f"{hook}: want exactly one '**Call style:** ...' line"
    assert hook in hookspecs.CALL_STYLES, f"{hook} is missing from CALL_STYLES"
    assert styles[0] == hookspecs.CALL_STYLES[hook]


@pytest.mark.parametrize("hook", ALL_HOOKS)
def test_section_has_an_example_impl(hook: str) -> None:
    names = [name for block in section_of(hook).blocks for name, _, _ in hookimpls(block.code)]
    assert hook in names, f"{hook}: no python example with an @hookimpl def {hook}(...)"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda block: block.id)
def test_python_block_compiles(block: Block) -> None:
    compile(block.code, block.id, "exec")


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda block: block.id)
def test_example_impls_name_real_hooks(block: Block) -> None:
    """An example impl of a core hook takes only that hook's arguments."""
    for name, args, optional in hookimpls(block.code):
        if optional:
            continue
        assert name in spec_args(), f"{block.id}: @hookimpl {name} is not a dsh hook"
        extra = set(args) - set(spec_args()[name])
        assert not extra, f"{block.id}: {name} takes {sorted(extra)}, not arguments of the hook"


YAML_BLOCKS = [
    block
    for path in [
        ROOT / "README.md",
        *sorted(DOCS.glob("*.md")),
        *sorted(ROOT.glob("plugins/*/README.md")),
    ]
    for section in parse(path)
    for block in section.blocks
    if block.lang == "yaml"
]


@functools.cache
def installed_settings() -> dict[str, Any]:
    settings: dict[str, Any] = {}
    create_plugin_manager().relay.register_settings(
        lambda plugin, model, section=None: settings.update({section or plugin: model})
    )
    return settings


@pytest.mark.parametrize(
    "block", YAML_BLOCKS, ids=lambda block: str(block.path.relative_to(ROOT)) + f":{block.line}"
)
def test_yaml_block_is_a_dsh_yml_that_loads(block: Block) -> None:
    """Every dsh.yml example loads as written: its keys, values and the models it names
    (a section of a plugin this run has not installed skips the block)."""
    sections = set(yaml.safe_load(block.code)) - set(CORE_KEYS)
    missing = sorted(sections - set(installed_settings()))
    if missing:
        pytest.skip(f"needs the plugin(s) {', '.join(missing)}")
    load_config(text=block.code, settings=installed_settings(), source=block.id)


@pytest.mark.parametrize("command", BUILT_IN)
def test_built_in_command_is_in_the_cli_table(command: str) -> None:
    """docs/cli.md's table of commands has a row for every built-in command."""
    lines = (DOCS / "cli.md").read_text().splitlines()
    first_cells = [line.split("|")[1] for line in lines if line.startswith("| `dsh ")]
    assert any(f"`dsh {command} " in cell or f"`dsh {command}`" in cell for cell in first_cells)


async def test_the_event_table_of_session_event_names_every_key_the_core_logs() -> None:
    from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

    rows: dict[str, str] = {}
    for line in HOOKS_MD.read_text("utf-8").splitlines():
        if line.startswith("| `") and "/" in line.split("|")[1]:
            kinds, keys = line.split("|")[1:3]
            for kind in re.findall(r"`([a-z]+/[a-z]+)`", kinds):
                rows[kind] = keys
    model = ScriptedModel([tool_calls(("ls", {"path": "."})), text("done")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "list the files")
    for event in events:
        assert event.type in rows, f"{event.type} is not in hooks.md's event table"
        for key in event.data:
            assert f"`{key}`" in rows[event.type], f"{event.type}.{key} is not in the table"
    assert {e.type for e in events} >= {"tool/call", "tool/result", "assistant/chunk"}


def test_the_readmes_dependency_groups_exist_and_it_says_how_to_get_a_pip_for_them() -> None:
    """README.md, Test: `pip install --group NAME` names groups of pyproject.toml, and,
    as a new venv's pip may be older than 25.1 (`no such option: --group`), says how to
    upgrade it."""
    import tomllib

    readme = " ".join((ROOT / "README.md").read_text().split())
    groups = set(re.findall(r"--group (\w+)", readme))
    assert groups, "README.md no longer names a dependency group"
    defined = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    assert groups <= set(defined), f"README.md names groups {sorted(groups - set(defined))}"
    assert "no such option: --group" in readme
    assert "`python3 -m pip install -U pip`" in readme
