"""writing-plugins.md's packaging, as a third-party author copies it: its
``pyproject.toml`` names the package the wheel ships (hatchling guesses it only when the
module matches the distribution's name), and its list of dsh's public modules is the
README's, whole (it ended in "..." and left out ``dsh.commands`` and ``dsh.turns``)."""

from __future__ import annotations

import re
import tomllib

from docs_files import ROOT


def test_the_pyproject_example_names_the_package_its_entry_point_imports() -> None:
    doc = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", doc, re.S)
    assert block is not None
    project = tomllib.loads(block.group(1))
    module = project["project"]["entry-points"]["dsh"]["myplugin"]
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == [f"src/{module}"]


def test_the_public_modules_listed_are_the_readmes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("The public modules are")
    listed = set(re.findall(r"`(dsh(?:\.\w+)?)`", readme[start : readme.index("_` is not", start)]))
    doc = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    start = doc.index("Depend on `dsh-core` only")
    sentence = doc[start : doc.index("may change in any release", start)]
    assert listed - set(re.findall(r"`(dsh(?:\.\w+)?)`", sentence)) == set()
    assert "..." not in sentence
