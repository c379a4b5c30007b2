"""A proxy password in a variable of a case other than lower or upper
(``Http_Proxy=http://bob:pass@host``), set before dsh starts, is hidden from log
records and ``dsh.redact`` once a harness starts, as the model API keys are: with no
dsh.yml loaded it was not until an HTTP client was made (log records look up only the
lower and upper case names: ``dsh._proxy_secrets``)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from dsh import redact
from dsh._secrets import HideKeys, known_keys
from dsh.harness import Harness

PASSWORD = "mixed-case-proxy-pass"


@pytest.mark.anyio
async def test_a_mixed_case_proxy_password_is_hidden_once_a_harness_starts(
    proxy_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    proxy_env.setenv("Http_Proxy", f"http://bob:{PASSWORD}@127.0.0.1:9")
    assert PASSWORD not in known_keys()  # not gathered yet (and nothing leaked in)
    async with Harness(load_entry_points=False, workspace=tmp_path):
        pass
    assert redact(f"the proxy said {PASSWORD}") == "the proxy said ***"
    record = logging.LogRecord("dsh", logging.ERROR, __file__, 1, "said %s", (PASSWORD,), None)
    assert HideKeys().filter(record)
    assert PASSWORD not in record.getMessage()
