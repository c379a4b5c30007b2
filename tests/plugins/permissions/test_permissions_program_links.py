"""A program given as a path that is a symbolic link (usability review of session 32).

A venv's ``python`` is a link to ``/usr/bin/python3.x`` (or a pyenv python), and it
was matched as that target only: neither ``allow: bash(.venv/bin/python *)`` nor
``allow: bash(python *)`` allowed ``.venv/bin/python -m pytest``. A link that lies in
the workspace (its directory resolved inside it) is now matched by allow rules as
written, ``./.venv/bin/python``; deny and ask rules see that, every link on the way,
the path each link holds (``..`` taken out, no link resolved: ``/bin/rm``, where
``/bin`` is a link to ``usr/bin``) and the target, so a rule on any of them still
covers the call through the link. A link outside the workspace is matched by allow
rules as its target, as before.
"""

from __future__ import annotations

import os

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

RUN = ".venv/bin/python -m pytest"


@pytest.fixture
def venv(layout):
    """``.venv/bin/python -> python3 -> {outside}/bin/python3.11`` (as venv makes
    them), ``venv-out -> {outside}/venv`` (a venv outside, linked in)."""
    (layout.outside / "bin").mkdir()
    (layout.outside / "bin" / "python3.11").write_text("#!/bin/sh\n")
    (layout.ws / ".venv" / "bin").mkdir(parents=True)
    (layout.ws / ".venv" / "bin" / "python3").symlink_to(layout.outside / "bin" / "python3.11")
    (layout.ws / ".venv" / "bin" / "python").symlink_to("python3")
    (layout.outside / "venv" / "bin").mkdir(parents=True)
    (layout.outside / "venv" / "bin" / "python").symlink_to(layout.outside / "bin" / "python3.11")
    (layout.ws / "venv-out").symlink_to(layout.outside / "venv")
    return layout


@pytest.mark.parametrize(
    ("allow", "command", "decision"),
    [
        ("bash(.venv/bin/python *)", RUN, "allow"),
        ("bash(./.venv/bin/python *)", RUN, "allow"),
        ("bash(.venv/bin/python *)", "./" + RUN, "allow"),
        ("bash(.venv/bin/python *)", "{ws}/" + RUN, "allow"),
        ("bash(.venv/bin/python *)", "timeout 60 " + RUN, "allow"),
        ("bash(.venv/bin/python3 *)", "./.venv/bin/python3 -m pytest", "allow"),
        # a path is not the program the shell finds on PATH
        ("bash(python *)", RUN, "ask"),
        # allow rules match the link as written, not where it leads
        ("bash(.venv/bin/python3 *)", RUN, "ask"),
        ("bash({outside}/bin/python3.11 *)", RUN, "ask"),
        # a link that lies outside the workspace is matched as its target
        ("bash(venv-out/bin/python *)", "venv-out/bin/python -m pytest", "ask"),
        ("bash({outside}/bin/python3.11 *)", "venv-out/bin/python -m pytest", "allow"),
    ],
)
async def test_allow_rules_match_a_workspace_link_as_written(judge, venv, allow, command, decision):
    rules = {"allow": [venv.fill(allow), "bash(timeout 60 *)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == decision, judged.event["reason"]


@pytest.mark.parametrize(
    "rule",
    [
        "bash({outside}/bin/python3*)",
        "bash({outside}/bin/python3.11 -m pytest)",
        "bash(python3.11 *)",
        "bash(.venv/bin/python3 *)",
        "bash(./.venv/bin/python3 *)",
        "bash(python3 *)",
        "bash(python *)",
        "bash(.venv/bin/python *)",
    ],
)
@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize("command", [RUN, "./" + RUN, "timeout 60 " + RUN, "sudo " + RUN])
async def test_deny_and_ask_rules_see_the_link_every_hop_and_the_target(
    judge, venv, rule, action, command
):
    rules = {"allow": ["bash(*)", "bash(.venv/bin/python *)"], action: [venv.fill(rule)]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == action, judged.event["reason"]


async def test_bypass_mode_denies_through_the_link(judge, venv):
    rules = {"deny": [venv.fill("bash({outside}/bin/python3*)")]}
    judged = await judge(rules, "bash", {"command": RUN}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


async def test_the_question_shows_the_link_as_written(judge, venv):
    judged = await judge({}, "bash", {"command": RUN})
    assert judged.decision == "ask"
    assert judged.requests[0].subjects == (("command", "./.venv/bin/python -m pytest"),)


async def test_a_link_named_from_home_is_denied_through_it_too(judge, venv, monkeypatch):
    """``~/ws/.venv/bin/python`` is the workspace's link when the workspace is in home:
    allowed as written, and a deny rule on the target still covers it."""
    monkeypatch.setenv("HOME", str(venv.root))
    command = "~/ws/.venv/bin/python -m pytest"
    rules = {"allow": ["bash(.venv/bin/python *)"]}
    assert (await judge(rules, "bash", {"command": command})).decision == "allow"
    rules["deny"] = [venv.fill("bash({outside}/bin/python3*)")]
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.fixture
def usrmerge(layout):
    """A merged ``/usr`` under ``{outside}`` (``bin -> usr/bin``, ``usr/bin/rm``), and
    the links to it a workspace's ``bin/ok`` may be."""
    usr_bin = layout.outside / "usr" / "bin"
    usr_bin.mkdir(parents=True)
    (usr_bin / "rm").write_text("#!/bin/sh\n")
    (usr_bin / "rm2").symlink_to("rm")
    (layout.outside / "bin").symlink_to("usr/bin")
    (layout.ws / "bin").mkdir()
    (layout.ws / "bin" / "rm3").symlink_to(layout.outside / "bin" / "rm")
    return layout


@pytest.mark.parametrize(
    "link",
    [
        "{outside}/bin/rm",
        "../../outside/bin/rm",
        # each link's own text is seen at every hop: {outside}/bin/rm2 -> rm
        "{outside}/bin/rm2",
        "rm3",  # -> {outside}/bin/rm
    ],
)
@pytest.mark.parametrize(
    "rule", ["bash({outside}/bin/rm *)", "bash({outside}/usr/bin/rm *)", "bash(rm *)"]
)
@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize("command", ["bin/ok -rf x", "./bin/ok -rf x", "timeout 5 bin/ok -rf x"])
async def test_deny_and_ask_rules_see_the_path_a_link_holds_as_written(
    judge, usrmerge, link, rule, action, command
):
    """On a merged /usr a link to ``/bin/rm`` leads to ``/usr/bin/rm``: a rule naming
    ``/bin/rm`` covers the program through the link all the same."""
    (usrmerge.ws / "bin" / "ok").symlink_to(usrmerge.fill(link))
    rules = {"allow": ["bash(bin/*)", "bash(timeout 5 *)"], action: [usrmerge.fill(rule)]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == action, judged.event["reason"]


async def test_a_link_held_path_is_also_read_from_where_the_link_lies(judge, usrmerge):
    """``usr -> {outside}/usr`` and ``{outside}/usr/bin/rm4 -> ../../bin/rm``:
    ``usr/bin/rm4`` runs ``{outside}/bin/rm`` (``..`` is taken where the link lies),
    not the workspace's ``bin/rm``."""
    (usrmerge.ws / "usr").symlink_to(usrmerge.outside / "usr")
    (usrmerge.outside / "usr" / "bin" / "rm4").symlink_to("../../bin/rm")
    rules = {"allow": ["bash(*)"], "deny": [usrmerge.fill("bash({outside}/bin/rm *)")]}
    judged = await judge(rules, "bash", {"command": "usr/bin/rm4 -rf x"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.skipif(
    not os.path.islink("/bin") or not os.path.exists("/bin/rm"), reason="needs /bin -> usr/bin"
)
@pytest.mark.parametrize("command", ["/bin/rm -rf x", "bin/ok -rf x", "./bin/ok -rf x"])
async def test_a_rule_on_bin_rm_covers_a_link_to_it_on_this_host(judge, layout, command):
    (layout.ws / "bin").mkdir()
    (layout.ws / "bin" / "ok").symlink_to("/bin/rm")
    rules = {"allow": ["bash(bin/*)", "bash(/bin/rm *)"], "deny": ["bash(/bin/rm *)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_deny_rules_see_where_a_link_outside_the_workspace_lies(judge, venv):
    """``venv-out/bin/python`` is ``{outside}/venv/bin/python``, a link to python3.11."""
    rules = {"allow": ["bash(*)"], "deny": [venv.fill("bash({outside}/venv/bin/python *)")]}
    judged = await judge(rules, "bash", {"command": "venv-out/bin/python -m pytest"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize("command", ["bin/loop -rf x", "loop/rm -rf x"])
async def test_a_program_whose_links_cannot_be_followed_is_asked(judge, layout, command):
    (layout.ws / "bin").mkdir()
    (layout.ws / "bin" / "loop").symlink_to("loop")
    (layout.ws / "loop").symlink_to("loop")
    judged = await judge({"allow": ["bash(*)", "bash(bin/*)"]}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


async def test_the_links_are_followed_once_per_program_word(judge, venv, monkeypatch):
    from dsh_permissions import _command_text

    followed: list[str] = []
    follow = _command_text.program_paths

    def counted(text: str, root: str) -> tuple[list[str], str | None]:
        followed.append(text)
        return follow(text, root)

    monkeypatch.setattr(_command_text, "program_paths", counted)
    await allowed(judge, {"allow": ["bash(.venv/bin/python *)"]}, RUN)
    assert followed == [".venv/bin/python"]
