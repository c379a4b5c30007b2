"""Bypasses found by session 48's hunt on programs left unmodelled (behaviour 49: a
command that runs or reads what the checker cannot see is asked about, never allowed).

1: ``man`` runs its pager (``-P``, ``--pager``, ``MANPAGER``, ``PAGER``, ``MANOPT``)
and its browser (``-H``, ``--html``, ``BROWSER``) through a shell, and reads a
configuration naming them (``-C``). 2: ``systemd-run``'s properties run commands of
their own (``-p ExecStartPre=...``) and its ``-E`` sets the command's environment
(``LD_PRELOAD``). 3: ``srun`` runs its ``--prolog``, ``--epilog``, ``--task-prolog``
and ``--task-epilog``. 4: ``envdir DIR`` and ``chpst -e DIR`` set the variables the
files of DIR hold (``PATH``, ``LD_PRELOAD``); ``envuidgid ACCOUNT`` runs the command
after it. 5: ``pygmentize -x`` loads a lexer or formatter from a Python file it is
given (``-l lexer.py:L``). 6: ``openssl``'s ``-pass``/``-passin``/``-passout
file:PATH`` reads PATH. 7: ``/dev/stdin``, ``/dev/fd/N`` and ``/proc/self`` were
resolved in dsh's own process for the question. 8: the commands of a pipeline, and one
behind ``&``, run together: a link a later one makes may be there when an earlier one
writes or reads (``echo x > w | ln -s /etc/x w``). 9: ``bsdunzip`` and ``stow`` make
symbolic links. 10: ``crontab -e``, ``visudo``, ``systemctl edit`` and ``kubectl
edit`` run the editor ``EDITOR``, ``VISUAL`` (and their own variables) name, set in
the line. 11: ``tcpdump -z`` runs a command on each file it rotates, ``ssh-keygen
-D``/``-w`` and ``ssh-add -s``/``-S``/``-e`` load a library (in the agent for
ssh-add), ``openssl -engine``/``-provider``/``-pre`` load one too, ``rpm -E``/``--eval``
/``-D`` expand macros whose ``%(...)`` runs a command, and ``crontab FILE`` (or ``-``:
its input) installs commands that run later. 12: ``GCONV_PATH`` makes glibc load the
character set converters of a directory (code) into any program, as ``LD_PRELOAD``
does. Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_PASSWD, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ALLOW_ENV = {"allow": ["bash"], "deny": ["read(.env)"]}
BYPASS_ETC = {"deny": ["bash(> /etc/*)"]}
ALLOW_ETC = {"allow": ["bash"], "deny": ["bash(> /etc/*)"]}
ALLOW_PASSWD = {"allow": ["bash"], "deny": ["read(/etc/passwd)"]}


# -- 1: man's pager and browser --------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "man -P 'rm x' ls", "man -Prm ls", "man --pager='rm x' ls", "man --pag=rm ls",
        "man -a -P rm ls", "MANPAGER='rm x' man ls", "PAGER='rm x' man ls",
        "export MANPAGER=rm; man ls", "MANOPT='-P rm' man ls", "man -H'rm x' ls",
        "man --html='rm x' ls", "BROWSER='rm x' man -H ls", "man -C ./man.conf ls",
        "man --config-file=man.conf ls", "sudo man -P rm ls",
    ],
)  # fmt: skip
async def test_b49_man_given_a_pager_or_browser_to_run(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["man ls", "man -k printf", "man 3 printf", "man -a ls"])
async def test_1_other_man_lines_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 2: systemd-run's properties and environment --------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "systemd-run -p ExecStartPre='/bin/rm x' ls", "systemd-run -pExecStartPre=/bin/rm ls",
        "systemd-run --property=ExecStopPost=/bin/rm ls", "systemd-run --prop ExecStartPre=rm ls",
        "systemd-run --user -p ExecStartPost=/bin/rm ls", "systemd-run -E LD_PRELOAD=./x.so ls",
        "systemd-run --setenv=LD_PRELOAD=./x.so ls", "systemd-run --timer-property=x=y ls",
        "systemd-run --socket-property=ExecStartPre=rm ls",
        "run0 --property=ExecStartPre=/bin/rm ls", "run0 --setenv=LD_PRELOAD=./x.so ls",
    ],
)  # fmt: skip
async def test_b49_systemd_run_given_a_property_or_variable(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["systemd-run --user ls", "systemd-run -q --wait ls"])
async def test_2_systemd_run_without_them_passes(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 3: srun's prologs and epilogs -----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "srun --prolog=./p ls", "srun --prolog ./p ls", "srun --epilog=./e ls",
        "srun --task-prolog=./p ls", "srun --task-epilog ./e ls", "srun -n 2 --task-pro=p ls",
    ],
)  # fmt: skip
async def test_b49_srun_given_a_prolog_or_epilog(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


async def test_3_srun_without_them_passes(judge):
    await allowed(judge, DENY_RM, "srun -n 2 ls")


# -- 4: runit's and daemontools' environment directories ------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "envdir ./env ls", "envdir env ls", "chpst -e ./env ls", "chpst -e./env ls",
        "chpst -v -e env ls", "envuidgid root rm x", "sudo envdir ./env ls",
        "setlock lock rm x", "pgrphack rm x", "s6-envdir env ls",
    ],
)  # fmt: skip
async def test_b49_an_environment_directory_or_account_runs_the_command(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["chpst -u nobody ls", "envuidgid nobody ls"])
async def test_4_chpst_without_e_and_envuidgid_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 5: pygmentize's custom lexers and formatters -------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "pygmentize -x -l lexer.py:L src/a.py", "pygmentize -l ./lex.py:L -x src/a.py",
        "pygmentize -f ./fmt.py:F -x a.py", "pygmentize -xl lex.py a.py",
        "pygmentize -x -F ./f.py:F a.py",
    ],
)  # fmt: skip
async def test_b49_pygmentize_loading_code_from_a_file(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["pygmentize src/a.py", "pygmentize -l python -f html a.py"])
async def test_5_pygmentize_without_x_passes(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 6: openssl's pass phrase files -----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "openssl enc -d -aes256 -pass file:.env -in a", "openssl rsa -passin file:.env -in k",
        "openssl rsa -passout file:./.env -in k", "openssl pkcs12 -passin file:src/../.env",
    ],
)  # fmt: skip
async def test_b49_openssl_reading_a_pass_phrase_file(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, ALLOW_ENV, command)


@pytest.mark.parametrize(
    "command", ["openssl rsa -passin pass:x -in k", "openssl rsa -passin env:P -in k"]
)
async def test_6_openssl_other_pass_phrases_pass(judge, command):
    await allowed(judge, ALLOW_ENV, command)


# -- 7: a path the command's own process resolves --------------------------------------


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("cat /dev/fd/0", "cat /dev/fd/0"), ("cat /dev/fd/3", "cat /dev/fd/3"),
        ("cat /proc/self/environ", "cat /proc/self/environ"),
        ("cat /dev/stdin src/a.py", "cat /dev/stdin src/a.py"),
        ("cat < /dev/stdin", "cat < /dev/stdin"),
    ],
)  # fmt: skip
async def test_b49_a_per_process_path_is_shown_as_written(judge, command, shown):
    # /dev/stdin, /dev/fd/N and /proc/self are the command's own: resolved in dsh's
    # process they named dsh's stdin (/dev/null, a pipe) and pid in the question
    rules = {"ask": ["bash(cat *)"], "deny": ["read(.env)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    (request,) = judged.requests
    assert ("command", shown) in request.subjects, request.subjects
    assert "/proc/" not in request.reason.replace("/proc/self", ""), request.reason
    assert "/dev/null" not in request.reason, request.reason


async def test_7_the_reason_names_the_command_s_own_process(judge):
    judged = await refused(judge, ALLOW_ENV, "cat /dev/fd/0")
    (request,) = judged.requests
    reason = request.reason
    assert (
        "'/dev/fd/0' names a file through /dev/fd, as the command's own process sees it" in reason
    ), reason


# -- 8: a link made alongside a write or read ---------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo x > w | ln -s /etc/x w", "echo x > w & ln -s /etc/x w",
        "(echo x > w) | ln -s /etc/x w", "echo x >> w | ln -sf /etc/x w",
        "echo x > w & unzip a.zip", "echo x > w | sh -c 'ln -s /etc/x w'",
    ],
)  # fmt: skip
async def test_b49_a_write_racing_a_link_of_the_same_line(judge, command):
    await refused(judge, BYPASS_ETC, command, mode="bypass")
    await refused(judge, ALLOW_ETC, command)


@pytest.mark.parametrize(
    "command",
    ["cat pw | ln -s /etc/passwd pw", "cat pw & ln -s /etc/passwd pw", "cat pw | unzip a"],
)
async def test_b49_a_read_racing_a_link_of_the_same_line(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, ALLOW_PASSWD, command)


@pytest.mark.parametrize("command", ["echo x > w; ln -s /etc/x w", "ls | grep x > out"])
async def test_8_a_write_before_a_link_or_without_one_passes(judge, command):
    await allowed(judge, ALLOW_ETC, command)


# -- 9: other programs that make symbolic links -----------------------------------------


@pytest.mark.parametrize(
    "command",
    ["bsdunzip a.zip && cat pw", "stow -d . -t . pkg && cat pw", "stow pkg; cat pw"],
)
async def test_b49_a_read_through_a_link_bsdunzip_or_stow_made(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, ALLOW_PASSWD, command)


async def test_9_bsdunzip_listing_passes(judge):
    await allowed(judge, ALLOW_PASSWD, "bsdunzip -l a.zip && cat src/a.py")


# -- 10: an editor named in the line ---------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "EDITOR='rm x' crontab -e", "VISUAL='rm x' crontab -e", "export EDITOR=rm; crontab -e",
        "EDITOR=rm visudo", "SUDO_EDITOR=rm visudo -c", "SYSTEMD_EDITOR=rm systemctl edit x",
        "EDITOR=rm systemctl --user edit x", "KUBE_EDITOR=rm kubectl edit pod x",
        "EDITOR=rm kubectl edit pod x",
    ],
)  # fmt: skip
async def test_b49_a_program_running_an_editor_the_line_names(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["crontab -l", "systemctl status x", "kubectl get pods"])
async def test_10_without_an_editor_named_they_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 11: programs running or loading what an option names -------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "tcpdump -w x -G 1 -z rm -i lo", "tcpdump -zrm", "ssh-keygen -D ./x.so",
        "ssh-keygen -w ./x.so -t ed25519-sk", "ssh-add -s ./x.so", "ssh-add -S ./x.so",
        "openssl req -engine ./x.so -new", "openssl engine dynamic -pre SO_PATH:./x.so",
        "openssl x509 -provider-path . -provider x -in c", "OPENSSL_CONF=./c openssl x509",
        "rpm -E '%(rm x)'", "rpm --eval='%(rm x)'", "rpm -D 'x %(rm y)' -q a",
        "echo '* * * * * rm x' | crontab -", "crontab jobs.txt", "crontab -u root jobs",
    ],
)  # fmt: skip
async def test_b49_a_program_running_or_loading_what_an_option_names(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "tcpdump -i lo -c 1", "ssh-keygen -t ed25519 -f k -N ''", "ssh-add -l",
        "openssl x509 -in c -noout", "rpm -qa", "crontab -l", "crontab -u root -l",
    ],
)  # fmt: skip
async def test_11_without_those_options_they_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 12: glibc's converter modules ------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["GCONV_PATH=. iconv -f x -t y f", "export GCONV_PATH=.; iconv -l", "env GCONV_PATH=. ls"],
)
async def test_b49_gconv_path_loading_code_into_a_program(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)
