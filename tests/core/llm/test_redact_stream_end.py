"""What the streaming redactor holds back comes out however the adapter's stream ends
(dsh.llm._redact_answer.hidden): with an error of any kind, or without a Finish; and
nothing more is yielded once the stream is cancelled or closed."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import anyio
import pytest
from test_secrets_study_errors import KEY

from dsh.errors import ModelError
from dsh.llm import Chunk, TextDelta
from dsh.llm._redact_answer import hidden

# -- the stream that ends or fails ------------------------------------------------------------


async def _answer(end: str) -> AsyncGenerator[Chunk, None]:
    yield TextDelta("hello sk-te")  # "sk-te" is held: it may be the key's start
    if end == "model":
        raise ModelError("STREAM_CLOSED", "x")
    if end == "other":
        raise RuntimeError("boom")
    if end == "wait":
        await anyio.sleep(10)
        yield TextDelta("never")


@pytest.mark.parametrize(
    ("end", "error"),
    [("model", ModelError), ("other", RuntimeError), ("return", None)],
    ids=["model-error", "other-error", "no-finish"],
)
async def test_what_is_held_comes_out_however_the_stream_ends(
    end: str, error: type[Exception] | None
) -> None:
    got: list[Chunk] = []

    async def read() -> None:
        async for chunk in hidden(_answer(end), (KEY,)):
            got.append(chunk)

    if error is None:
        await read()
    else:
        with pytest.raises(error):
            await read()
    assert [c.text for c in got if isinstance(c, TextDelta)] == ["hello ", "sk-te"]


async def test_a_cancelled_or_closed_stream_yields_nothing_more() -> None:
    got: list[Chunk] = []
    with anyio.move_on_after(0.1):
        stream = hidden(_answer("wait"), (KEY,))
        try:
            async for chunk in stream:
                got.append(chunk)
        finally:
            await stream.aclose()  # would raise if it yielded on the way out
    assert got == [TextDelta("hello ")]
    stream = hidden(_answer("wait"), (KEY,))
    assert await stream.__anext__() == TextDelta("hello ")
    await stream.aclose()
