"""``python -m dsh``: the ``dsh`` command, as ``python -m dsh.cli`` is."""

from __future__ import annotations

from dsh.cli import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
