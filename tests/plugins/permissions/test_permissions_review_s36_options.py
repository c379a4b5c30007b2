"""Findings of session 36's permissions review (perm4 4): options of programs the
plugin models that make them run a command it does not look into (tar
``--to-command``, ``split --filter``, ``rsync -e``, ``git -c core.pager=...``, ...),
and the environment variables that do the same (``GIT_CONFIG_PARAMETERS``,
``RSYNC_RSH``, ``TAR_OPTIONS``). Such a command is asked about, and denied in bypass
mode where a deny rule of the tool could match what it runs.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_PASSWD, BYPASS_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

_LISTED = ["tar", "split", "rsync", "zip", "scp", "vim", "wget", "sort", "cpio", "git", "gpg"]
_ALSO = ["emacs", "ed", "export", "HOME=. git", "GNUPGHOME=. gpg"]
ALLOW_LISTED = {"allow": [f"bash({name} *)" for name in [*_LISTED, *_ALSO]]}

RUNNING = [
    "tar xf a.tar --to-command='rm x'", "tar xf a.tar --to-com='rm x'",
    "tar -cf x.tar src --checkpoint=1 --checkpoint-action=exec='rm x'",
    "tar -cf x.tar src --checkpoint-act=exec='rm x'", "tar -I 'rm x' -xf a.tar",
    "tar -xIrm a.tar", "tar xIf rm a.tar", "tar --use-compress-program='rm x' -xf a.tar",
    "tar --use-compress='rm x' -xf a.tar", "tar -F 'rm x' -cf x.tar src",
    "tar --info-script='rm x' -cf x.tar src", "tar --new-volume-script='rm x' -cf x.tar src",
    "tar --rsh-command='rm x' -cf h:x.tar src", "sudo tar --to-command='rm x' -xf a.tar",
    "TAR_OPTIONS=--to-command='rm x' tar xf a.tar", "export TAR_OPTIONS=-Irm; tar xf a.tar",
    "split --filter='rm x' f", "split --fil='rm x' f",
    "rsync -e 'rm x' a h:b", "rsync -ave 'rm x' a h:b", "rsync --rsh='rm x' a h:b",
    "rsync --rsync-path='rm x' a h:b", "RSYNC_RSH='rm x' rsync a h:b",
    "zip -T -TT 'rm x' x.zip f", "zip --unzip-command 'rm x' -T x.zip f",
    "scp -S 'rm x' f h:", "scp -o ProxyCommand='rm x' f h:",
    "vim -c '!rm x' f", "vim +'!rm x' f", "vim --cmd '!rm x' f", "vim -es f",
    "emacs --eval '(shell-command \"rm x\")' f", "ed f",
    "wget --use-askpass='rm x' http://h/", "wget -e use_askpass='rm x' http://h/",
    "sort --compress-program='rm x' f", "sort --compress='rm x' f",
    "cpio --rsh-command='rm x' -o", "git -c core.pager='rm x' log",
    "git -c core.sshCommand='rm x' fetch", "git -c core.fsmonitor='rm x' status",
    "git -c alias.x='!rm x' x", "git --config-env=core.pager=P log",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm x' git log",
    "GIT_CONFIG_PARAMETERS=\"'core.pager'='rm x'\" git log",
    "export GIT_CONFIG_PARAMETERS=\"'core.pager'='rm x'\"; git log",
    "GIT_SSH_COMMAND='rm x' git fetch", "GIT_EDITOR='rm x' git commit",
    "git --config-env core.pager=P log", "git --exec-path=. frob",
    "git rebase -x 'rm x' main", "git rebase --exec='rm x' main", "git rebase -ix 'rm x' main",
    "git bisect run rm x", "git submodule foreach rm x", "git difftool -x 'rm x'",
    "git fetch --upload-pack='rm x' origin", "git clone -u 'rm x' h:r",
    "git push --receive-pack='rm x' origin", "git filter-branch --tree-filter 'rm x'",
    "git config core.pager 'rm x'", "git config --local core.fsmonitor 'rm x'",
    "git config set alias.x '!rm x'", "HOME=. git status", "export HOME=.; git status",
    "gpg --exec-path /x --photo-viewer 'rm x' --list-keys", "GNUPGHOME=. gpg -d f",
]  # fmt: skip


@pytest.mark.parametrize("command", RUNNING)
async def test_4_an_option_that_runs_a_command_is_not_allowed_by_a_pattern(judge, command):
    await refused(judge, ALLOW_LISTED, command)


@pytest.mark.parametrize("command", RUNNING)
async def test_4_an_option_that_runs_a_command_is_denied_under_a_deny_rule(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["tar xf a.tar --to-command='cat /etc/passwd'", "git -c core.pager='cat /etc/passwd' log"],
)
async def test_4_under_a_read_deny_rule_in_bypass_mode(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "tar xf a.tar", "tar -czf x.tgz src", "tar --checkpoint=10 -cf x.tar src",
        "tar -cf x.tar -C src .", "tar xf a.tar --to-stdout", "split -l 10 f",
        "rsync -a src/ dst/", "rsync -av --exclude=.git src/ dst/", "zip -r x.zip src",
        "scp f h:", "vim f", "vim +10 f", "wget -O out http://h/", "sort -k 2 f",
        "cpio -o", "git status", "git -c user.name=a -c user.email=b commit -m m",
        "git -c color.ui=never log", "git -C src status", "git -c core.pager=cat log",
        "git -c pager.log=false log", "git --no-pager log", "git rebase -i main",
        "git fetch origin", "git config user.name a", "git config --get core.pager",
        "git config --list", "export X=1 && git log", "gpg -d f", "gpg --list-keys",
    ],
)  # fmt: skip
async def test_4_the_other_options_change_nothing(judge, command):
    await allowed(judge, ALLOW_LISTED, command)
