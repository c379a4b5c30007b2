"""Run a block as if this process could not write what file modes forbid it to.

Tests run as root in some places (containers), and root writes a ``0400`` file all the
same: ``as_file_modes_say`` drops root's ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``
from the calling thread's effective capabilities for the block (they stay permitted,
and are raised again after it), so a read-only file is read-only to it, as to any user.
For anyone else it changes nothing. Where capabilities cannot be changed so (not Linux,
no ``capset``), the test is skipped.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

__all__ = ["as_file_modes_say"]

_VERSION_3 = 0x20080522
_DAC = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


@contextmanager
def as_file_modes_say() -> Iterator[None]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        yield
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if not hasattr(libc, "capget") or not hasattr(libc, "capset"):
        pytest.skip("running as root, and capabilities cannot be dropped here")
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
