"""hooks.md, "Logging events of your own": a plugin's event type starting with its name
is a convention, which the docs must not present as a rule dsh keeps ("`type` is the
plugin's name, ..."): ``emit`` takes another plugin's type, which that plugin's
reducers and stores then take for their own."""

from __future__ import annotations

from docs_files import ROOT

from dsh.session import Session


def test_the_docs_say_the_plugin_name_prefix_is_a_convention_and_not_owned() -> None:
    doc = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Logging events of your own") :]
    section = section[: section.index("\n## ")]
    said = " ".join(section.split())
    assert "`type` is the plugin's name" not in said
    assert "`type` should be the plugin's name, a slash and what happened" in said
    assert "a convention, not checked" in said and "Types are not owned" in said


async def test_emit_takes_another_plugins_type_as_the_docs_say() -> None:
    session = Session("s")
    await session.emit("compact/summary", {"text": "not compaction's"})
    assert [event.type for event in session.events] == ["compact/summary"]
