"""The docs' reference lists, against the code they describe: every `DSH_*` variable the
code reads is documented (and every one the docs name exists), and every settings table
(docs/config.md's `models.<name>` and `agents[]`, the plugins' sections) names exactly
the keys of its pydantic model, with the defaults the model has."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parents[2]
USER_DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(ROOT.glob("plugins/*/README.md")),
    *sorted(ROOT.glob("examples/*/README.md")),
]
SOURCES = [ROOT / "core" / "src", *sorted(ROOT.glob("plugins/*/src")), ROOT / "examples"]
VARIABLE = re.compile(r"\bDSH_[A-Z0-9_]*[A-Z0-9]\b")


def variables_in(paths: list[Path], pattern: str = "*.py") -> set[str]:
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob(pattern)))]
    return {name for f in files for name in VARIABLE.findall(f.read_text("utf-8"))}


def test_every_dsh_variable_the_code_reads_is_documented() -> None:
    """A user finds each `DSH_*` environment variable dsh or a first-party plugin reads
    in README.md, docs/ or a plugin's README."""
    documented = variables_in(USER_DOCS)
    read = variables_in(SOURCES)
    assert read, "no DSH_ variable found in the sources: the search is broken"
    assert read <= documented, f"undocumented: {sorted(read - documented)}"


def test_every_dsh_variable_the_docs_name_exists() -> None:
    """A `DSH_*` name in the docs is read by the code, the test suite or noxfile.py (a
    misspelt or removed variable would be set to no effect)."""
    tests = [p for p in sorted((ROOT / "tests").iterdir()) if p.name != "docs_audit"]
    known = variables_in([*SOURCES, *tests, ROOT / "noxfile.py"])
    named = variables_in(USER_DOCS)
    assert named <= known, f"the docs name variables nothing reads: {sorted(named - known)}"


def table_after(doc: str, anchor: str) -> dict[str, str]:
    """The `| key | default | meaning |` table after ``anchor`` in docs/``doc``: each key
    (a cell may name several: `allow`, `ask`, `deny`) with its default cell."""
    text = (ROOT / "docs" / doc).read_text("utf-8")
    lines = text[text.index(anchor) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| key | default |"))
    rows: dict[str, str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        keys, default = line.split("|")[1:3]
        for key in re.findall(r"`(\w+)`", keys):
            rows[key] = default.strip()
    return rows


def model_of(dotted: str) -> Any:
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def plugin(name: str) -> Any:
    return pytest.mark.plugins(name)


TABLES = [
    pytest.param("config.md", "### `models.<name>`", "dsh._config_models.ModelConfig", id="models"),
    pytest.param("config.md", "### `agents[]`", "dsh._config_models.AgentConfig", id="agents"),
    pytest.param(
        "compaction.md",
        "max_summary_tokens: 3000",
        "dsh_compaction._settings.CompactionSettings",
        marks=plugin("compaction"),
        id="compaction",
    ),
    pytest.param(
        "permissions.md",
        "## Settings reference",
        "dsh_permissions._settings.PermissionsSection",
        marks=plugin("permissions"),
        id="permissions",
    ),
    pytest.param(
        "persistence.md",
        "checkpoint_delay: 0.05  # seconds",
        "dsh_persistence._settings.PersistenceSettings",
        marks=plugin("persistence"),
        id="persistence",
    ),
]


@pytest.mark.parametrize(("doc", "anchor", "model"), TABLES)
def test_a_settings_table_names_exactly_the_models_keys(doc: str, anchor: str, model: str) -> None:
    rows = table_after(doc, anchor)
    fields = set(model_of(model).model_fields)
    assert set(rows) == fields, (
        f"docs/{doc}: keys not in {model}: {sorted(set(rows) - fields)}; "
        f"keys of the model the table leaves out: {sorted(fields - set(rows))}"
    )


@pytest.mark.parametrize(("doc", "anchor", "model"), TABLES)
def test_a_settings_tables_literal_defaults_are_the_models(
    doc: str, anchor: str, model: str
) -> None:
    """A default cell that is one literal (`60`, `batch`, `[]`, `{}`, `true`, `""`) is
    the field's default; words (`provider's`, `see below`) are left to the prose, and so
    is a field whose default is None (unset: the code that reads it decides, as the loop
    does for an agent's `max_steps`)."""
    fields = model_of(model).model_fields
    checked = 0
    for key, cell in table_after(doc, anchor).items():
        literal = re.fullmatch(r"`([^`]*)`", cell)
        if not literal or key not in fields or "<" in literal[1]:
            continue
        written = yaml.safe_load(literal[1])
        default = fields[key].get_default(call_default_factory=True)
        if default is None and written is not None:
            continue
        if isinstance(default, tuple):
            default = list(default)
        assert written == default, f"docs/{doc}: {key} defaults to {default!r}, not {cell}"
        checked += 1
    assert checked, f"docs/{doc}: no literal default found: the table parse is broken"


async def test_tools_md_lists_the_built_in_tools_as_they_are() -> None:
    """docs/tools.md: the table (mutating, path arguments, command arguments) and each
    tool's heading, `## \\`read(path, offset=1, limit=2000)\\``, are what the tool
    declares and the parameters, with the defaults, the model is told."""
    from dsh.testing import scripted_harness

    text = (ROOT / "docs" / "tools.md").read_text("utf-8")
    async with scripted_harness(load_entry_points=False) as harness:
        tools = {spec.name: harness.tools.get(spec.name) for spec in harness.tools.specs()}
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 5 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = tuple(cells[1:4])
    headings = dict(re.findall(r"^## `(\w+)\((.*)\)`$", text, re.M))
    assert set(rows) == set(headings) == set(tools), (sorted(rows), sorted(headings))
    for name, tool in tools.items():
        assert tool is not None
        words = lambda names: ", ".join(f"`{n}`" for n in names)  # noqa: E731
        declared = (
            "yes" if tool.mutating else "no",
            words(tool.path_args),
            words(tool.command_args),
        )
        assert rows[name] == declared, f"tools.md's row of {name}: {rows[name]} != {declared}"
        schema = tool.spec.parameters
        parts = [
            f"{p}={json.dumps(prop['default'])}" if "default" in prop else p
            for p, prop in schema["properties"].items()
        ]
        shown = headings[name].replace("None", "null").replace("False", "false")
        assert shown == ", ".join(parts), f"tools.md's heading of {name}: {headings[name]!r}"


def test_models_md_lists_the_built_in_providers_with_their_defaults() -> None:
    """docs/models.md's first table: each built-in provider, its adapter, its default
    `base_url` and `api_key_env` ("none" where there is none)."""
    from dsh.llm.providers import PROVIDERS

    rows = {}
    for line in (ROOT / "docs" / "models.md").read_text("utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 4 and cells[1].endswith("Model`"):
            rows[cells[0].strip("`")] = cells[1:]
    assert set(rows) == set(PROVIDERS)
    for name, provider in PROVIDERS.items():
        adapter, base_url, key = rows[name]
        assert adapter.strip("`").rsplit(".", 1)[-1] == provider.adapter.__name__, name
        assert (base_url.strip("`") if "`" in base_url else None) == provider.base_url, name
        assert (key.strip("`") if "`" in key else None) == provider.api_key_env, name


@pytest.mark.plugins("permissions")
async def test_the_permission_decision_table_names_exactly_the_events_fields(
    tmp_path: Path,
) -> None:
    """docs/permissions.md, "The `permission/decision` event": its table of fields is
    what the event holds, for an allowed call and for a denied one."""
    import dsh_permissions
    from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

    doc = (ROOT / "docs" / "permissions.md").read_text("utf-8")
    table = doc[doc.index("## The `permission/decision` event") :].split("\n\n")[2]
    documented = {
        f for line in table.splitlines()[2:] for f in re.findall(r"`(\w+)`", line.split("|")[1])
    }
    config = "permissions: {deny: [bash]}\n"
    model = ScriptedModel(
        [tool_calls(("ls", {"path": "."}), ("bash", {"command": "true"})), text("done")]
    )
    plugins = [("permissions", dsh_permissions)]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=config, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    decisions = [e.data for e in events if e.type == "permission/decision"]
    assert [d["decision"] for d in decisions] == ["allow", "deny"]
    for data in decisions:
        assert set(data) == documented, (sorted(data), sorted(documented))


@pytest.mark.plugins("compaction")
async def test_the_compaction_event_table_names_the_events_fields() -> None:
    """docs/compaction.md, "Session events": each `compact/*` event of a compaction that
    prunes and summarises holds only the keys its row names, and every key the row
    names but `error` (only if any), and `turn` and `step` for a manual compaction
    between turns (logged outside any turn)."""
    from compaction_util import harness, reads, summarizer

    from dsh.testing import ScriptedModel, run_turn
    from dsh_compaction import compact_now

    rows, said = {}, {}
    for line in (ROOT / "docs" / "compaction.md").read_text("utf-8").splitlines():
        cells = line.split("|")
        if len(cells) > 3 and re.fullmatch(r" `compact/\w+` ", cells[1]):
            keys = re.sub(r"\([^()]*\)", "", cells[2])  # (the values a key takes)
            rows[cells[1].strip(" `")] = set(re.findall(r"`(\w+)`", keys))
            said[cells[1].strip(" `")] = cells[2]
    assert set(rows) == {"compact/start", "compact/prune", "compact/summary", "compact/end"}
    settings = {"model": "summarizer", "prune_chars": 100, "context_window": 4000}
    options = {"model": "scripted", "compaction": settings}
    async with harness(ScriptedModel(reads(6)), summarizer("what happened")) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "task")  # prunes on the threshold
        await compact_now(agent)  # summarises
        events = [e for e in agent.session.events if e.type.startswith("compact/")]
    assert {e.type for e in events} == set(rows), [e.type for e in events]
    for event in events:
        manual = event.data.get("reason") == "manual"
        optional = {"error", *(("turn", "step") if manual else ())}
        if manual and "turn" in rows[event.type] and "turn" not in event.data:
            said_where = said["compact/start"]
            assert "between turns" in said_where, "compact/start does not say when turn is absent"
        assert set(event.data) <= rows[event.type], (event.type, sorted(event.data))
        missing = rows[event.type] - set(event.data) - optional
        assert not missing, f"{event.type} has no {sorted(missing)}"


LISTING = re.compile(r"^`?([\w.]+) +(dsh-[\w-]+) \d+\.\d+\.\d+ +([a-z_, .]+?)`?$")


def listing_rows() -> list[Any]:
    """Each `dsh plugins` row the docs show (in a console block or quoted in prose), of a
    plugin in this repository."""
    rows = []
    for doc in USER_DOCS:
        for number, line in enumerate(doc.read_text("utf-8").splitlines(), 1):
            for text in [line.strip(), *re.findall(r"`([^`]+)`", line)]:
                found = LISTING.match(text)
                if found and found[1] != "myplugin":
                    where = f"{doc.relative_to(ROOT)}:{number}"
                    marks = () if found[1].startswith("dsh.") else plugin(found[1])
                    rows.append(pytest.param(where, *found.groups(), marks=marks, id=where))
    return rows


@pytest.mark.parametrize(("where", "name", "distribution", "hooks"), listing_rows())
def test_a_dsh_plugins_row_of_the_docs_shows_the_plugins_hooks(
    where: str, name: str, distribution: str, hooks: str
) -> None:
    """A row shows the plugin's hooks as `dsh plugins` prints them (sorted by name), in
    full or their first ones followed by `...`."""
    from dsh.plugins import create_plugin_manager, list_plugins

    select = [] if name.startswith("dsh.") else [name]
    infos = {info.name: info for info in list_plugins(create_plugin_manager(select=select))}
    assert infos[name].distribution == distribution, where
    shown = [hook.strip() for hook in hooks.split(",")]
    if shown[-1] == "...":
        shown.pop()
        assert list(infos[name].hooks[: len(shown)]) == shown, (where, infos[name].hooks)
    else:
        assert list(infos[name].hooks) == shown, (where, infos[name].hooks)


MODULE_TABLES = [
    p for p in sorted(ROOT.glob("plugins/*/README.md")) if "| module |" in p.read_text()
]


@pytest.mark.parametrize("readme", MODULE_TABLES, ids=lambda p: p.parent.name)
def test_a_plugin_readmes_module_table_names_every_module(readme: Path) -> None:
    """A plugin README's `| module | holds |` table names the package's modules, each
    that exists, and none left out."""
    text = readme.read_text("utf-8")
    table = text[text.index("| module | holds |") :].split("\n\n")[0].splitlines()[2:]
    named = {m for line in table for m in re.findall(r"`(\w+)`", line.split("|")[1])}
    package = next((readme.parent / "src").glob("dsh_*"))
    modules = {p.stem for p in package.glob("*.py")}
    assert named == modules, (
        f"{readme.relative_to(ROOT)}: not modules: {sorted(named - modules)}; "
        f"left out: {sorted(modules - named)}"
    )


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose(path: Path) -> str:
    return re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.S)


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_doc_leads_to_a_file_and_heading_that_exist(doc: Path) -> None:
    """A relative link `[...](file.md#anchor)` names a file of the repository and, with
    an anchor, one of that file's headings."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(doc)):
        path, _, anchor = target.partition("#")
        if target.startswith(("http://", "https://")):
            continue
        full = (doc.parent / path).resolve() if path else doc
        if not full.exists():
            broken.append(target)
        elif anchor and full.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", prose(full), re.M)
            if anchor not in {slug(h) for h in headings}:
                broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)}: links to nothing: {broken}"
