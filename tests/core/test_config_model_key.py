"""An API key pasted into dsh.yml's ``model:`` by mistake is not quoted in the error
that refuses it as an unknown model: the message says the name looks like a key (and
where it is), so that it is not copied into a terminal's scroll-back, a CI log or a bug
report. A misspelt model name, however long, is still quoted with its hint."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import fails, write

#: shaped like the providers' keys (made up)
KEYS = [
    "sk-proj-Q3xv9LkT2mWp8RzN4bYc7HdJ1fGs6EaK0uVo5iXy",
    "sk-ant-api03-Zq8Xw2Lk9Mn4Bv7Cx1Rt5Yp3Hs6Jd0Fg-AbCdEfGhIjKlMnOpQrStUvWxYz01234AA",
    "AIzaSyD4x9Kq2Lm7Np3Rs8Tv1Wx6Yz0Ab5Cd-Ef",
    "gsk_8Jx2Lm5Nq9Rt3Vw7Yz1Bc4Df6Gh0Kp2MsQ",
]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("where", ["top", "agent"])
def test_a_key_given_as_the_model_is_not_shown(tmp_path: Path, key: str, where: str) -> None:
    text = "models:\n  fast: {provider: x}\n"
    if where == "top":
        text += f"model: {key}\n"
    else:
        text += f"agents:\n  - id: a\n    model: {key}\n"
    file = write(tmp_path, text)
    err = fails(file)
    assert key not in str(err) and key[:12] not in str(err), str(err)
    assert err.path == ("model" if where == "top" else "agents[0].model")
    assert err.reason.startswith("unknown model (the name given looks like an API key, not shown")
    assert "models defined: fast" in err.reason


@pytest.mark.parametrize(
    "name",
    [
        "claude-3-5-sonnet-20241022",
        "gpt-4o-2024-08-06",
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen2.5-Coder-32B-Instruct-GGUF",
    ],
)
def test_a_model_name_is_still_quoted(tmp_path: Path, name: str) -> None:
    err = fails(write(tmp_path, f"models:\n  fast: {{provider: x}}\nmodel: {name}\n"))
    assert err.reason.startswith(f"unknown model {name!r}"), err.reason
