"""Bypasses closed in session 50 (behaviour 49): a file a program is told to write is
covered by a ``bash(> path)`` rule as a redirection to it is.

``deny: bash(> .env)`` covered ``echo x > .env`` only: ``cp x .env``, ``echo x | tee
.env``, ``sed -i ... .env``, ``dd of=.env``, ``sort -o .env`` and the like wrote it all
the same. Now the files ``tee``, ``cp``, ``mv``, ``install``, ``ln``, ``link``, ``dd``,
``sed -i``, ``truncate``, ``sort -o``, ``shuf -o``, ``uniq``'s output, ``curl -o``,
``wget -O``, ``find -fprint`` (``-fprint0``, ``-fls``, ``-fprintf``), ``rsync``, ``scp``,
``patch`` and ``touch`` write (and curl's headers, cookies and traces, wget's log and
cookies, rsync's log and batch, patch's rejects) are also read as ``> path`` by deny
and ask rules (also behind a wrapper, after a ``cd``); allow rules never see them.
Behind ``xargs``, or given find's ``{}``, where a writer writes is only known when it
runs: asked about under such a rule. Each row goes through the real dispatcher
(conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import allowed, refused

pytestmark = pytest.mark.plugins("permissions")

WRITE_ENV = {"allow": ["bash"], "deny": ["bash(> .env)"]}
BYPASS_WRITE = {"deny": ["bash(> .env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "cp x .env", "cp -f x .env", "cp x ./src/../.env", "cp src/.env .",
        "cp -t . src/.env", "cp --target-directory=. src/.env", "mv x .env",
        "mv src/.env ./", "install -m 600 x .env", "ln -sf x .env", "ln -s src/.env",
        "link x .env", "tee .env", "echo x | tee -a src/a.py .env", "tee -- .env",
        "sudo tee .env", "timeout 5 cp x .env", "env -i cp x .env", "dd if=x of=.env",
        "sed -i s/a/b/ .env", "sed -i.bak -e s/a/b/ .env", "sed -ni p .env",
        "gsed --in-place s/a/b/ .env", "truncate -s0 .env", "truncate --size 0 .env",
        "sort -o .env x", "sort --output=.env x", "sort -uo.env x", "shuf -o .env x",
        "uniq x .env", "uniq -c x .env", "curl -o .env http://h/x",
        "curl -sSo .env http://h/x", "curl --output .env http://h/x",
        "wget -O .env http://h/x", "wget -qO .env http://h/x",
        "wget --output-document=.env http://h/x", "cd src && cp x ../.env",
        "env -C src cp x ../.env", "cp x \uff0eenv", "true && cp x .env",
        "find . -fprint .env", "find src -name '*.py' -fprint0 .env", "find . -fls .env",
        "find . -fprintf .env '%p'", "find . -name x -fprint ./.env -quit",
        "rsync x .env", "rsync -a src/.env ./", "rsync -e ssh x .env", "scp h:x .env",
        "scp -P 22 h:.env .", "patch .env < p", "patch -o .env x < p", "touch .env",
        "touch -d now .env",
    ],
)  # fmt: skip
async def test_b50_a_program_writing_the_file_is_covered(judge, command):
    judged = await refused(judge, BYPASS_WRITE, command, mode="bypass")
    assert "> .env" in judged.event["reason"] or "bash(> .env)" in judged.event["reason"]
    judged = await judge(WRITE_ENV, "bash", {"command": command})
    assert judged.decision == "deny", (command, judged.event["reason"])


@pytest.mark.parametrize(
    "command",
    [
        "cp x y", "cp .env src/", "mv a.txt b.txt", "tee out.txt", "sed -n p .env",
        "sed -i s/a/b/ src/a.py", "sort -k1 .env", "uniq .env", "dd if=.env of=/dev/null",
        "curl -o out http://h/.env", "wget -O - http://h/x", "ln -s .env src/x",
        "truncate -s0 src/a.py", "cat .env | tee /dev/null", "find . -fprint out",
        "find . -name .env -print", "rsync -a src/ h:.env", "scp .env h:", "touch a",
        "patch -p1 < x.patch",
    ],
)  # fmt: skip
async def test_b50_writing_other_files_passes(judge, command):
    await allowed(judge, WRITE_ENV, command)
    await allowed(judge, BYPASS_WRITE, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "ln -s /etc/passwd w; tee w", "ln -s /etc w && cp x w/passwd",
        # after a cd too (each write was read in each place the shell may be, and its
        # link left out: allowed)
        "ln -s /etc/passwd w; cd . && tee w", "cd src && ln -s /etc/passwd w && cp x w",
        "cd src && ln -s /etc/passwd w && echo x | tee w",
        "ln -s /etc w; cd src && dd of=../w/passwd",
    ],
)  # fmt: skip
async def test_b50_a_write_through_a_link_the_line_makes_is_not_known(judge, command):
    rules = {"allow": ["bash"], "deny": ["bash(> /etc/*)"]}
    await refused(judge, rules, command)
    await refused(judge, {"deny": ["bash(> /etc/*)"]}, command, mode="bypass")


async def test_b50_a_cd_and_a_link_the_write_itself_makes_still_pass(judge):
    # the link is the write's own (ln writes w): no earlier command made it
    await allowed(judge, {"allow": ["bash"], "deny": ["bash(> /etc/*)"]}, "cd src && ln -s a w")


async def test_b50_allow_rules_do_not_need_to_allow_the_writes(judge):
    await allowed(judge, {"allow": ["bash(cp *)"]}, "cp x .env")
    await allowed(judge, {"allow": ["bash(tee *)", "bash(echo *)"]}, "echo x | tee out")


async def test_b50_an_ask_rule_for_every_write_asks_about_a_copy(judge):
    judged = await judge({"allow": ["bash"], "ask": ["bash(> *)"]}, "bash", {"command": "cp a b"})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "echo .env | xargs cp x", "echo .env | xargs tee", "xargs -n1 truncate -s0",
        "find . -name .env -exec cp x {} \\;", "find . -exec tee {} +",
        "sudo xargs tee -a",
    ],
)  # fmt: skip
async def test_b50_a_writer_fed_its_files_when_it_runs_is_asked_about(judge, command):
    # its input (or find's file names) may name .env: asked, even under allow: [bash]
    judged = await judge(WRITE_ENV, "bash", {"command": command})
    assert judged.decision == "ask", (command, judged.event["reason"])
    await refused(judge, BYPASS_WRITE, command, mode="bypass")
    # with no rule about writes, nothing changes
    await allowed(judge, {"allow": ["bash"], "deny": ["bash(rm *)"]}, command)


@pytest.mark.parametrize(
    "command",
    [
        "curl -D .env http://h/x", "curl -sc .env http://h/x", "curl --cookie-jar .env http://h",
        "curl --dump-header=.env http://h/x", "curl --trace .env http://h/x",
        "curl --trace-ascii=.env http://h", "curl --stderr .env http://h",
        "curl --libcurl .env http://h", "curl --etag-save .env http://h",
        "wget -o .env http://h/x", "wget -qa .env http://h/x", "wget --output-file=.env http://h",
        "wget --append-output .env http://h", "wget --save-cookies .env http://h",
        "rsync --log-file=.env a b", "rsync --write-batch=.env a b",
        "rsync --only-write-batch .env a b", "patch -r .env x < p", "patch --reject-file=.env x",
    ],
)  # fmt: skip
async def test_b50_a_listed_programs_other_written_files_are_covered(judge, command):
    # what the server sends (its headers, its cookies) or a log, in the file the rule
    # names: curl -D .envrc writes lines the server chose
    await refused(judge, BYPASS_WRITE, command, mode="bypass")
    judged = await judge(WRITE_ENV, "bash", {"command": command})
    assert judged.decision == "deny", (command, judged.event["reason"])


@pytest.mark.parametrize(
    "command",
    [
        "curl -D - http://h/.env", "curl -c jar.txt http://h/.env", "curl -sSL http://h/.env",
        "curl --trace-time http://h/.env", "wget -o log.txt http://h/.env",
        "rsync --log-file=log a b", "patch -r out.rej x < p",
    ],
)  # fmt: skip
async def test_b50_their_other_files_elsewhere_pass(judge, command):
    await allowed(judge, WRITE_ENV, command)
