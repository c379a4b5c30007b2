"""The names the docs use, against the code: every `DSH_*` variable the code reads is
documented (and every one the docs name exists), every relative link and anchor leads
somewhere, every option of a `dsh ...` command line is one the command takes, the
`dsh plugins` rows shown are what it prints, and a plugin README's module table names
the package's modules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from docs_files import ROOT, USER_DOCS

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
                    marks = () if found[1].startswith("dsh.") else pytest.mark.plugins(found[1])
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


def command_lines(doc: Path) -> list[str]:
    """The `dsh ...` command lines of a doc: in its code blocks and its `code` spans."""
    text = doc.read_text("utf-8")
    blocks = "\n".join(re.findall(r"```[^\n]*\n(.*?)```", text, re.S)).splitlines()
    spans = " ".join(re.sub(r"```.*?```", "", text, flags=re.S).split()).split("`")[1::2]
    found = []
    for line in [*blocks, *spans]:
        for start in re.finditer(r"(?:^|(?<=[\s|&(]))dsh (?=[-a-z])", line):
            found.append(re.split(r" [|&;<>#]| \\\|", line[start.end() :])[0])
    return found


@pytest.mark.plugins("persistence")
def test_every_option_a_docs_dsh_command_gives_is_one_the_command_takes() -> None:
    """A `-x`/`--flag` written after `dsh` (global, before the command) or after
    `dsh COMMAND [ACTION]` is an option of that parser (`dsh run --contine` would
    fail)."""
    import argparse

    from dsh._cli_args import build_parser
    from dsh.cli import _commands
    from dsh.plugins import create_plugin_manager

    parser = build_parser(_commands(create_plugin_manager(select=["persistence"])))

    def children(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(subs[0].choices) if subs else {}

    wrong = []
    for doc in USER_DOCS:
        for line in command_lines(doc):
            current, words = parser, line.split()
            for word in words:
                if word.startswith("-") and len(word) > 1 and not word.startswith("--json="):
                    flag = word.split("=")[0].rstrip(",.)")
                    if flag not in current._option_string_actions and flag != "--":
                        wrong.append(f"{doc.relative_to(ROOT)}: dsh {line} ({flag})")
                elif word in children(current):
                    current = children(current)[word]
    assert not wrong, "\n".join(wrong)
