"""Fixtures shared by the model providers' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsh import _secrets
from dsh.llm import _counts

#: every variable the HTTP client takes a proxy from, or the hosts it reaches directly
PROXY_VARIABLES = (
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
)


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """``monkeypatch`` with every proxy variable unset: the test sets its own."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture(autouse=True)
def _remembered_secrets() -> Iterator[None]:
    """The secrets a test makes dsh remember (a proxy password: ``dsh._secrets._READ``)
    are forgotten after it: a later test finds hidden only what it gave itself."""
    saved = set(_secrets._READ)
    yield
    _secrets._READ.clear()
    _secrets._READ.update(saved)


@pytest.fixture(autouse=True)
def _usage_warnings() -> Iterator[None]:
    """Each test starts with no usage warning said yet (``dsh.llm._counts._WARNED``: a
    warning comes once per model and field in a process), so it may name its model as
    it likes, and the warnings of the tests before it are kept for those after."""
    saved = set(_counts._WARNED)
    _counts._WARNED.clear()
    yield
    _counts._WARNED.clear()
    _counts._WARNED.update(saved)
