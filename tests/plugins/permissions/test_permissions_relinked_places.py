"""A link-making command makes a later read unknown only where a link may lie
(usability review of session 32's stricter permissions).

Once a command of a line might make or move a symbolic link (``tar x``, ``unzip``,
``ln``, ``mv``/``cp``/``rsync`` of a link, git), every later read of the line was
asked about under a ``read`` rule with a pattern, even where no link can lie:
``unzip -d out x.zip && cat README.md``. Now the places such a command writes are
told (``_destinations``), and a later read is unknown only when its walk goes through
one, or holds one; a place not known (a variable, a cd, an option hiding another
place, git) keeps every later read unknown.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from permissions_turns import bash, real_turn
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash(*)"], "deny": ["read(.env)"]}
RELINKED = "run as a command of its own, the read is checked"


@pytest.mark.parametrize(
    "command",
    [
        "unzip -d out x.zip && cat README.md",
        "unzip -qo x.zip -d out && grep -rn TODO src",
        "unzip -P -d x.zip -d out && cat src/a.py",  # the password is -d
        "tar xzf a.tgz -C build && cat notes.txt",
        "tar -C build -xzf a.tgz && cat src/a.py",
        "tar --directory=build -xf a.tar && cat src/a.py",
        "tar --directory build -xf a.tar; cat src/a.py",
        "tar xf a.tar -C build src/a.py && cat src/a.py",  # named after -C: build/src/a.py
        "tar xCf build a.tar && cat src/a.py",
        "tar xf a.tar -C {outside} && cat src/a.py",
        "sh -c 'tar xf a.tar -C build' && cat src/a.py",
        "ln -s ../src/a.py out/a && cat src/a.py",
        "ln -sf /etc/hostname host && cat src/a.py",
        "ln -s -t out ../src/a.py && cat src/a.py",
        "cp -s src/a.py b && cat src/a.py",
        "mv link_out moved && cat src/a.py",
        "cp -a link_out copied && grep -rn x src/config",
        "rsync -a link_out host:backup/ && cat src/a.py",  # written on another host
        "rsync -a host:site/ out/ && cat src/a.py",
    ],
)
async def test_a_read_where_no_link_can_lie_runs_unasked(judge, command):
    await allowed(judge, RULES, command)


@pytest.mark.parametrize(
    "command",
    [
        # at or below the place, or through it
        "tar xf a.tar -C out && cat out/x",
        "tar xf a.tar -C out && cat ./out/../out/x",
        "tar xf a.tar -C out && cat out/x/../../src/a.py",  # out/x may be a link
        "tar xf a.tar -C src/config/.. && cat src/x",
        "tar xf a.tar -C out && grep -r TOKEN .",  # a directory holding it
        "tar xf a.tar -C link_out && cat ../outside/x",  # the place as it resolves
        "tar xf a.tar -C {outside} && cat link_out/x",  # a read through a link to it
        "tar xf a.tar -C src && cat ../outside/secret.txt",  # src/escape leads there
        "tar xf a.tar -C out && cat {ws}/out/x",
        "unzip a.zip && cat src/a.py",  # its own directory
        "unzip -d out a.zip && cat out/a.py",
        "ln -s /etc/passwd p && cat p",
        "ln -s /etc p && cat p/passwd",
        "ln -s /etc/passwd && cat passwd",
        "ln -s /etc/hostname src/x && cat src/x",
        "ln -sf /etc/hostname src/config && cat src/config/hostname",
        "ln -s /etc/hostname -t src && cat src/hostname",
        "mv link_out src/ && cat src/link_out/secret.txt",
        "mv link_out src/config && cat src/config/secret.txt",
        "rsync -a link_out dst && cat dst/secret.txt",
        "rsync -a host:site/ out/ && cat out/x",  # another host may send links
        "rsync -a rsync://host/site/ out/ && cat out/x",
        # moving what an earlier command of the line may have made a link
        "tar xf a.tar -C out && mv out/x y && cat y",
        "tar xf a.tar -C out && cp -a out y && cat y/x",
        "tar xf a.tar -C out && cp -a . ../copy && cat ../copy/out/x",
        # renaming or hard-linking what may be a link (link keeps a symlink as one)
        "tar xf a.tar -C out && rename s/x/y/ out/x && cat y",
        "link link_out y && cat y/secret.txt",
        # a place through an earlier one: out2 leads to src once ln has run
        "ln -s src out2 && mv link_out out2/ && cat src/link_out/secret.txt",
        "tar xf a.tar -C out && mv link_out out/sub/ && cat notes.txt",
        # a place that is not known: every later read
        "tar xf a.tar f -C out && cat f",  # GNU tar unpacks f here
        "tar xf a.tar -C out -C src && cat notes.txt",
        "tar -xf -C out && cat notes.txt",  # the archive is -C
        "tar --exclude -C -xf a.tar out && cat notes.txt",
        "tar xPf a.tar -C out && cat src/a.py",
        "tar xf a.tar -T list -C out && cat src/a.py",
        'tar xf a.tar -C "$D" && cat src/a.py',
        "TAR_OPTIONS=-C. tar xf a.tar -C out && cat src/a.py",
        "export TAR_OPTIONS=-C.; tar xf a.tar -C out && cat src/a.py",
        "set -a; TAR_OPTIONS=-C.; tar xf a.tar -C out && cat src/a.py",
        "env TAR_OPTIONS=-C. tar xf a.tar -C out && cat src/a.py",
        "unzip -: -d out a.zip && cat src/a.py",
        "unzip -x a -d out a.zip && cat src/a.py",
        "unzip -d out -d src a.zip && cat notes.txt",
        "ln -sb x src/a.py && cat src/a.py~",  # the backup is what was there
        "mv --exchange link_out src/a.py && cat link_out/x",  # what was there lands here
        "xargs -a list ln -s && cat src/a.py",
        "mv $F out/ && cat src/a.py",
        "rsync -a link_out dst --exclude x && cat src/a.py",
        "cd src && tar xf ../a.tar && cd .. && cat {ws}/src/a.py",
        "env -C src tar xf ../a.tar && cat {ws}/src/a.py",
        "sh -c 'cd src; tar xf ../a.tar'; cat {ws}/src/a.py",
        "7z x a.7z -oout && cat src/a.py",
        # git writes its work tree, which holds the workspace
        "git pull && grep -rn TODO src",
        "git checkout other && cat src/a.py",
        "git checkout other && cat /etc/hostname",
    ],
)
async def test_a_read_where_a_link_may_lie_is_asked(judge, command):
    judged = await judge(RULES, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert RELINKED in judged.requests[0].reason


async def test_a_place_reaches_where_the_links_below_it_lead_in_turn(judge, layout):
    # out/sub -> deep, deep/inner -> outside: tar x -C out may write through both
    (layout.ws / "out").mkdir()
    (layout.ws / "deep").mkdir()
    (layout.ws / "out" / "sub").symlink_to(layout.ws / "deep")
    (layout.ws / "deep" / "inner").symlink_to(layout.outside)
    command = "tar xf a.tar -C out && cat {outside}/secret.txt"
    judged = await judge(RULES, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    await allowed(judge, RULES, "tar xf a.tar -C out && cat src/a.py")


async def test_the_links_below_a_place_are_looked_for_only_when_a_read_needs_them(
    judge, monkeypatch
):
    import dsh_permissions._link_places as link_places

    walked: list[str] = []

    def links_below(directory: str) -> tuple[tuple[str, ...], None]:
        walked.append(directory)
        return (), None

    monkeypatch.setattr(link_places, "links_below", links_below)
    # every read is in the workspace, where unzip unpacks: nothing to walk
    line = "unzip a.zip && cat src/a.py && grep -rn TODO src"
    assert (await judge(RULES, "bash", {"command": line})).decision == "ask"
    assert walked == []
    line = "unzip -d out a.zip && cat src/a.py && cat src/config/x"
    assert (await judge(RULES, "bash", {"command": line})).decision == "allow"
    assert len(walked) == 1, walked  # once for the line, not once per read


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("tar -C src/secrets -xf a.tar key", "allow"),  # names in the archive
        ("tar -C src/secrets -cf o.tar key", "ask"),  # reads src/secrets/key
        ("tar -C src/secrets -cf -xo.tar key", "ask"),  # packs: -xo.tar is the archive
        ("tar -C src/secrets -xf a.tar -T list", "ask"),  # the list may hold -C
        ("tar -C src/secrets --diff -xf a.tar key", "ask"),
    ],
)
async def test_tar_reads_from_its_directory_only_when_it_packs(judge, command, decision):
    rules = {"allow": ["bash(*)"], "deny": ["read(src/secrets/**)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == decision, judged.event["reason"]


def _archive(path: Path, links: dict[str, str]) -> None:
    """A tar archive of symbolic links (name -> target) and a ``notes.txt``."""
    with tarfile.open(path, "w") as tar:
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        info = tarfile.TarInfo("notes.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"plain\n"))


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    (ws / ".env").write_text("TOKEN=s3cr3t\n")
    (ws / "notes.txt").write_text("mine\n")
    _archive(ws / "a.tar", {"x": "../.env", "sub": "../out"})
    return ws


@pytest.mark.parametrize(
    "command",
    [
        "tar xf a.tar -C out && cat out/x",
        "tar xf a.tar -C out && cat out/sub/x",
        "tar xf a.tar -C out && grep -R TOKEN out",
        "tar xf a.tar && cat x",
        "sh -c 'tar xf a.tar -C out' && cat out/x",
    ],
)
async def test_a_link_unpacked_earlier_in_the_line_is_not_read_unasked(tmp_path, command):
    ws = _workspace(tmp_path)
    rules = {"allow": ["bash(tar *)", "bash(cat *)", "bash(grep *)", "bash(sh *)"]}
    turn = await real_turn(ws, {**rules, "deny": ["read(.env)"]}, [bash(command)])
    assert [d["decision"] for d in turn.decisions] == ["deny"], turn.decisions
    assert turn.questions, turn.decisions
    assert not any("s3cr3t" in r for r in turn.results), turn.results


async def test_unpacking_elsewhere_leaves_a_read_here_unasked(tmp_path):
    ws = _workspace(tmp_path)
    rules = {"allow": ["bash(tar *)", "bash(cat *)"], "deny": ["read(.env)"]}
    turn = await real_turn(ws, rules, [bash("tar xf a.tar -C out && cat notes.txt")])
    assert [d["decision"] for d in turn.decisions] == ["allow"], turn.decisions
    assert "mine" in turn.results[0], turn.results
    assert (ws / "out" / "x").is_symlink()
