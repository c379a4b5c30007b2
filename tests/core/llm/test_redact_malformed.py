"""The streaming redactor (dsh.llm._redact_answer) leaves a chunk the assembler refuses
as it came, so a third-party adapter's mistake ends the step MALFORMED_RESPONSE as it
does without a key; and what the text held at the end of an answer joins the block it
was held from."""

from __future__ import annotations

from typing import Any

import pytest
from test_secrets_study_errors import KEY

from dsh.errors import ModelError
from dsh.llm import Assembler, Chunk, Finish, ReasoningDelta, TextDelta, ToolCallDelta
from dsh.llm._redact_answer import AnswerRedactor

BAD: list[Any] = [
    TextDelta(123),  # type: ignore[arg-type]
    TextDelta(None),  # type: ignore[arg-type]
    ReasoningDelta(None),  # type: ignore[arg-type]
    ReasoningDelta("x", signature=5),  # type: ignore[arg-type]
    ToolCallDelta([0], "c1", "bash", "{}"),  # type: ignore[arg-type]
    ToolCallDelta(0, "c1", "bash", None),  # type: ignore[arg-type]
    ToolCallDelta(0, 7, "bash", "{}"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("chunk", BAD, ids=repr)
def test_a_chunk_of_wrong_types_reaches_the_assembler_as_it_came(chunk: Chunk) -> None:
    passed = AnswerRedactor((KEY,)).take(chunk)
    assert passed == [chunk] and passed[0] is chunk
    with pytest.raises(ModelError) as caught:
        Assembler().add(chunk)
    assert caught.value.code == "MALFORMED_RESPONSE"


def test_what_the_text_held_at_the_finish_joins_the_text_block() -> None:
    """Both kinds hold a start of the key when the answer ends (the reasoning's, 10
    characters, stays held when the text begins); the text's held end comes out first,
    so it joins the text block it was held from instead of opening another."""
    hide = AnswerRedactor((KEY,))
    chunks = [
        ReasoningDelta(f"thinking about {KEY[:10]}"),
        TextDelta(f"The answer is {KEY[:6]}"),
        Finish("stop"),
    ]
    out = [shown for chunk in chunks for shown in hide.take(chunk)]
    assembler = Assembler()
    for chunk in out:
        assembler.add(chunk)
    message = assembler.message()
    texts = [block for block in message.content if type(block).__name__ == "TextBlock"]
    assert len(texts) == 1, out
    assert message.text == f"The answer is {KEY[:6]}"
