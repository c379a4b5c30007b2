"""Run a block as if this process could not write what file modes forbid it to.

Tests run as root in some places (containers), and root writes a ``0400`` file all the
same: ``as_file_modes_say`` drops root's ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``
from the calling thread's effective capabilities for the block (they stay permitted,
and are raised again after it), so a read-only file is read-only to it, as to any user.
For anyone else it changes nothing. Where capabilities cannot be changed so (not Linux,
no ``capset``), the test is skipped.

A child process gets root's capabilities back when it starts a program (``execve``):
``child_as_file_modes_say()`` is a ``preexec_fn`` that drops those two from the child's
bounding and inheritable sets for good, so the program it runs has them neither.

Shared by the tests of core, CLI and plugins (tests/ is on ``sys.path``: tests/conftest.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

__all__ = ["as_file_modes_say", "child_as_file_modes_say"]

_VERSION_3 = 0x20080522
_DAC_CAPS = (1, 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
_DAC = sum(1 << cap for cap in _DAC_CAPS)
_PR_CAPBSET_DROP = 24


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if not all(hasattr(libc, name) for name in ("capget", "capset", "prctl")):
        pytest.skip("running as root, and capabilities cannot be dropped here")
    return libc


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextmanager
def as_file_modes_say() -> Iterator[None]:
    if not _as_root():
        yield
        return
    libc = _libc()
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        pytest.skip("running as root, and capabilities cannot be read here")
    before = data[0].effective
    data[0].effective = before & ~_DAC
    if libc.capset(ctypes.byref(header), data) != 0:
        pytest.skip("running as root, and capabilities cannot be dropped here")
    try:
        yield
    finally:
        data[0].effective = before
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "cannot restore the capabilities dropped")


def child_as_file_modes_say() -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess``: the child, and what it runs, cannot read or
    write what file modes forbid it to (None, for no ``preexec_fn``, unless root)."""
    if not _as_root():
        return None
    libc = _libc()  # loaded here: the child only calls it (skipped here if it cannot)

    def drop() -> None:  # in the child, between fork and exec (subprocess reports a raise)
        header, data = _Header(_VERSION_3, 0), (_Data * 2)()
        for cap in _DAC_CAPS:
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "cannot drop the bounding capabilities")
        if libc.capget(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "cannot read the capabilities")
        for field in ("effective", "permitted", "inheritable"):
            setattr(data[0], field, getattr(data[0], field) & ~_DAC)
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "cannot drop the capabilities")

    return drop
