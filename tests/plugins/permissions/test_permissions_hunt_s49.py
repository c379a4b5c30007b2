"""Bypasses closed in session 49 (behaviour 49: a command that runs or reads what the
checker cannot see is asked about, never allowed).

1: ``ldd FILE...`` may run each FILE (a program with another loader runs as it is):
each is checked as a command run. 2: ``logrotate CONF`` runs the scripts its
configuration gives (``postrotate``), and ``-m``/``--mail`` a command. 3: ``xdg-open``
and the other openers run the program a desktop or mailcap setting names (a
``.desktop`` file's ``Exec``, ``BROWSER``); ``gio`` also reads (``gio cat``). 4:
``/dev/stdin`` (and ``/dev/stdout``, ``/dev/stderr``) read by a command was resolved in
dsh's process: when dsh's own input is a file, a read rule saw that file. 5:
``NODE_OPTIONS``, ``RUBYOPT`` and the java launcher's option variables make any node,
ruby or java program (npm, tsc, rake, gradle) load code (``--require``, ``-r``,
``-javaagent``), as ``PERL5OPT`` does any perl; a value of memory sizes and warnings
only is not counted. 6: git runs ``PAGER`` when no ``GIT_PAGER`` or ``core.pager`` is
set; ``sensible-editor``, ``sensible-pager`` and ``sensible-browser`` run the editor,
pager or browser the line names. 7: a redirection, a program or a path-like word
through ``/proc/self``, ``/proc/PID`` or ``/dev/fd`` was matched as written: ``>
/proc/self/cwd/.env`` writes the workspace's ``.env`` and ``/proc/self/exe -c CMD`` run
by bash is bash; now a value only known when the command runs. 8: a sum's ``-c`` /
``--check`` reads the files its list names (and says whether a guessed sum is right).
9: less runs its ``+CMD`` (``+!rm x``, also in ``LESS``) and reads a lesskey file
(``-k``, ``LESSKEYIN``) that may set ``LESSOPEN``. 10: ``dpkg-deb -x``, ``unsquashfs``,
``unrar`` and other unpackers make the symbolic links an archive holds, as ``unzip``
does. 11: a shell runs its startup files (``~/.zshenv`` even for ``zsh -c``), which
``HOME``, ``ZDOTDIR`` or ``XDG_CONFIG_HOME`` set in the line may place in the workspace.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import os

import pytest
from permissions_util import (
    BYPASS_ENV,
    BYPASS_PASSWD,
    BYPASS_RM,
    DENY_RM,
    allowed,
    refused,
)

pytestmark = pytest.mark.plugins("permissions")

ALLOW_ENV = {"allow": ["bash"], "deny": ["read(.env)"]}


# -- 1: ldd runs what it is given ------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ldd /bin/rm", "ldd -v /bin/ls /bin/rm", "ldd a b c /bin/rm", "ldd -- /bin/rm",
        "sudo ldd /bin/rm", "ldd -r -u /usr/bin/rm",
    ],
)  # fmt: skip
async def test_b49_ldd_of_a_denied_program(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["ldd ./bin", "ldd -v ./a.out", "ldd /bin/ls ./bin"])
async def test_b49_ldd_of_a_program_not_allowed_is_asked_about(judge, command):
    # allowing ldd does not allow the programs it may run
    judged = await judge({"allow": ["bash(ldd *)"]}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


async def test_1_ldd_of_an_allowed_program_passes(judge):
    await allowed(judge, {"allow": ["bash(ldd *)", "bash(/usr/bin/ls*)"]}, "ldd /usr/bin/ls")
    await allowed(judge, DENY_RM, "ldd /bin/ls /usr/lib/x.so")


# -- 2: logrotate's configuration and mailer -------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "logrotate ./c.conf", "logrotate -f -s st c.conf", "logrotate --state=st c.conf",
        "logrotate -d c.conf", "logrotate -m rm --version", "logrotate --mail=rm c",
        "logrotate --ma rm c", "sudo logrotate /etc/logrotate.conf",
    ],
)  # fmt: skip
async def test_b49_logrotate_runs_its_configuration_s_scripts(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


async def test_2_logrotate_without_a_configuration_passes(judge):
    await allowed(judge, DENY_RM, "logrotate --version")


async def test_2_the_reason_names_the_configuration(judge):
    judged = await refused(judge, BYPASS_RM, "logrotate ./c.conf", mode="bypass")
    assert "logrotate runs the scripts ./c.conf gives" in judged.event["reason"]


# -- 3: openers run what a desktop setting names --------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "xdg-open x.desktop", "BROWSER='rm x' xdg-open http://x", "gio open x.desktop",
        "gio launch x.desktop", "kde-open x.desktop", "kde-open5 x", "kioclient exec x",
        "exo-open x.desktop", "gnome-open x", "gvfs-open x", "gtk-launch x", "dex x.desktop",
        "run-mailcap x.txt", "see x.txt", "open x.command", "openvt -- rm x",
        "sudo xdg-open x",
    ],
)  # fmt: skip
async def test_b49_an_opener_runs_what_a_setting_names(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["gio cat .env", "gio copy .env /tmp/x", "gio save x < .env"])
async def test_b49_gio_reading_a_denied_file(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, ALLOW_ENV, command)


# -- 4: the command's own standard streams --------------------------------------------


@pytest.fixture
def dsh_input_is_a_file(layout):
    """dsh's own standard input made the workspace's ``src/a.py`` for the test (as with
    ``dsh run ... < file``): ``/dev/stdin`` resolved in dsh's process names it."""
    saved = os.dup(0)
    fd = os.open(layout.ws / "src" / "a.py", os.O_RDONLY)
    try:
        os.dup2(fd, 0)
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(fd)


@pytest.mark.parametrize(
    "command",
    [
        "cat /dev/stdin", "cat < /dev/stdin", "grep -f /dev/stdin x", "cat /dev//stdin",
        "cat /dev/./stdin", "head /dev/stderr", "cat 0</dev/stdin",
    ],
)  # fmt: skip
async def test_b49_a_stream_is_the_command_s_not_dsh_s(judge, dsh_input_is_a_file, command):
    # with dsh's input a file, /dev/stdin resolved here named that file (src/a.py):
    # a deny rule of the read tool on what the command's input is was not consulted
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    judged = await refused(judge, ALLOW_ENV, command)
    (request,) = judged.requests
    assert "a.py" not in request.reason, request.reason


async def test_4_the_reason_says_it_is_the_command_s_stream(judge, dsh_input_is_a_file):
    judged = await refused(judge, BYPASS_ENV, "cat /dev/stdin", mode="bypass")
    assert "'/dev/stdin' names the command's own standard stream" in judged.event["reason"]


async def test_4_a_stream_written_to_passes(judge, dsh_input_is_a_file):
    await allowed(judge, ALLOW_ENV, "echo x > /dev/stderr")
    await allowed(judge, ALLOW_ENV, "cat src/a.py > /dev/stdout")


# -- 5: option variables every program of a runtime reads -----------------------------


@pytest.mark.parametrize(
    "command",
    [
        "NODE_OPTIONS='--require ./x.js' npm --version", "NODE_OPTIONS=-r./x.js tsc",
        "export NODE_OPTIONS='-r ./x.js'; npx tsc", "NODE_OPTIONS='--import ./x.mjs' eslint .",
        "NODE_OPTIONS='--max-old-space-size=4096 -r x' npm run build",
        "NODE_OPTIONS=--no-warnings NODE_OPTIONS+=' -r x' npm test",
        "export NODE_OPTIONS=-rx; npm test", "RUBYOPT=-rx bundle exec rake",
        "RUBYOPT=-rx rake", "JAVA_TOOL_OPTIONS=-javaagent:x.jar gradle build",
        "_JAVA_OPTIONS='-XX:OnOutOfMemoryError=rm' mvn x",
        "JDK_JAVA_OPTIONS=-javaagent:x.jar java -version", "env RUBYOPT=-rx gem list",
    ],
)  # fmt: skip
async def test_b49_a_runtime_s_option_variable_loading_code(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "NODE_OPTIONS=--max-old-space-size=4096 npm run build",
        "NODE_OPTIONS='--max-old-space-size=4096 --no-warnings' npm run build",
        "RUBYOPT=-W0 rake", "JAVA_TOOL_OPTIONS=-Xmx2g gradle build",
        "JDK_JAVA_OPTIONS=-Dfile.encoding=UTF-8 java -version", "npm run build",
    ],
)  # fmt: skip
async def test_5_memory_sizes_and_warnings_pass(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")


# -- 6: pagers, editors and browsers the line names -----------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "PAGER='rm x' git log", "export PAGER=rm; git log", "git log; PAGER=rm git log",
        "EDITOR=rm sensible-editor x", "VISUAL=rm sensible-editor",
        "export SELECTED_EDITOR=rm; sensible-editor x", "HOME=. sensible-editor x",
        "PAGER='rm x' sensible-pager", "export BROWSER=rm; sensible-browser",
    ],
)  # fmt: skip
async def test_b49_a_pager_editor_or_browser_the_line_names(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["git log", "sensible-pager x", "sensible-editor x"])
async def test_6_without_one_named_they_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 7: a path through the command's own process, outside read rules -----------------

DENY_ENV_WRITE = {"allow": ["bash"], "deny": ["bash(> .env)", "bash(> /etc/*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "echo x > /proc/self/cwd/.env", "echo x > /dev/fd/../cwd/.env",
        "echo x >> /proc/thread-self/cwd/.env", "echo x > /proc/self/root/etc/x",
        "echo x 2> /proc/self/cwd/.env", "echo x >/proc/self/fd/1",
    ],
)  # fmt: skip
async def test_b49_a_redirection_through_proc_self(judge, command):
    # /proc/self/cwd is the command's directory (the workspace): it was matched as
    # written, so a deny rule on '> .env' never saw it
    await refused(judge, {"deny": DENY_ENV_WRITE["deny"]}, command, mode="bypass")
    await refused(judge, DENY_ENV_WRITE, command)


@pytest.mark.parametrize(
    "command", ["/proc/self/exe -c 'rm x'", "/dev/fd/../exe -c 'rm x'", "/proc/self/cwd/x"]
)
async def test_b49_a_program_through_proc_self(judge, command):
    # /proc/self/exe, run by bash, is bash: its -c runs the string
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["echo x > /dev/stderr", "echo x 2>&1 > out.txt"])
async def test_7_a_stream_or_a_plain_file_passes(judge, command):
    await allowed(judge, DENY_ENV_WRITE, command)


# -- 8: a sum checked against a list ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "md5sum -c l", "sha256sum --check l", "sha256sum --ch l", "md5sum -bc l",
        "b2sum -c l", "cksum -c l", "echo 'x  .env' | sha256sum -c", "shasum -c l",
    ],
)  # fmt: skip
async def test_b49_a_sum_checked_against_a_list(judge, command):
    # the list names the files (.env) and a guessed sum: it says OK or FAILED
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, ALLOW_ENV, command)


async def test_8_a_sum_of_a_file_passes(judge):
    await allowed(judge, ALLOW_ENV, "sha256sum src/a.py")


# -- 9: less's initial commands and lesskey files ---------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "less +'!rm x' f", "less '+|rm x' f", "less ++!rm f", "less +Gv f",
        "LESS='+!rm x' less f", "export LESS=+!rm; less f", "LESS=-k./keys less f",
        "less -k keys f", "less -Rk keys f", "less --lesskey-src=x f", "LESSKEYIN=x less f",
        "LESSKEY_CONTENT='#env' less f",
    ],
)  # fmt: skip
async def test_b49_less_running_a_command_it_is_given(judge, command):
    # +CMD is typed into less as it starts: ! runs a shell command, | pipes to one, v
    # runs the editor; a lesskey file may set LESSOPEN
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "less +G f", "less +F f", "less +100 f", "less +/TODO f", "less -R f",
        "LESS=-R less f", "LESS=-FRX less f",
    ],
)  # fmt: skip
async def test_9_less_moving_or_searching_passes(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 10: other unpackers make the links an archive holds ---------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "dpkg-deb -x a.deb .; cat pw", "unsquashfs a; cat pw", "unrar x a.rar && cat pw",
        "xorriso -osirrox on -extract / .; cat pw", "aunpack a.tgz; cat pw",
        "7zz x a.7z; cat pw", "bsdcpio -i < a; cat pw", "unar a.zip && cat pw",
    ],
)  # fmt: skip
async def test_b49_a_read_through_a_link_an_unpacker_made(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, {"allow": ["bash"], "deny": ["read(/etc/passwd)"]}, command)


# -- 11: a shell's startup files where the line says -------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ZDOTDIR=. zsh -c true", "export ZDOTDIR=.; zsh -c true", "HOME=. zsh -c true",
        "HOME=. bash -l -c true", "HOME=. bash -i -c true", "HOME=. bash --login -c ls",
        "HOME=. sh -l -c true", "HOME=. csh -c true", "HOME=. tcsh -c true",
        "XDG_CONFIG_HOME=. fish -c true", "env HOME=. zsh -c true",
    ],
)  # fmt: skip
async def test_b49_a_shell_reading_startup_files_the_line_places(judge, command):
    # zsh sources $ZDOTDIR/.zshenv (~/.zshenv) even for -c; a login shell ~/.profile,
    # an interactive bash ~/.bashrc, csh ~/.cshrc, fish its config.fish
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["zsh -c true", "bash -c 'ls src'", "fish -c true"])
async def test_11_a_shell_with_the_person_s_startup_files_passes(judge, command):
    await allowed(judge, DENY_RM, command)
