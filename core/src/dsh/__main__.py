"""``python -m dsh``: the ``dsh`` command, as ``python -m dsh.cli`` is."""

from __future__ import annotations

if __name__ == "__main__":  # before dsh.cli's imports (runpy imported the dsh package,
    # which imports nothing): a Ctrl-C meanwhile is said as the dsh command says it
    from _dsh_command import quiet_ctrl_c

    quiet_ctrl_c()

from dsh.cli import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
