"""An HTTP 404 from a model server names the address the request went to and the
setting that makes it, ``base_url`` (found by a new-user journey review: a base_url
without ``/v1``, the likeliest first mistake with ``-m openai-compatible:x@URL``, said
only ``HTTP 404: not_found_error: File Not Found``). The address is shown without
``base_url``'s query, which may hold a key; a 404 whose words name the
model (Ollama's ``model 'qwen' not found``) is about the model, not the address."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llm_wire import WireServer, collect, error, unserved

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
LLAMA_404 = {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}


def openai(base_url: str) -> OpenAICompatibleModel:
    config = ModelConfig(provider="openai-compatible", model="m", base_url=base_url, max_retries=0)
    return OpenAICompatibleModel("wire", config, env={})


def anthropic(base_url: str) -> AnthropicModel:
    config = ModelConfig(
        provider="anthropic", model="c", base_url=base_url, api_key_env="K", max_retries=0
    )
    return AnthropicModel("wire", config, env={"K": "sk-ant-test-0123456789abcdef"})


ADAPTERS = [(openai, "/chat/completions"), (anthropic, "/messages")]


async def failure(
    adapter: Callable[[str], Any], payload: Any, base: Callable[[str], str]
) -> tuple[ModelError, str]:
    async with WireServer([error(404, payload)]) as server:
        root = server.url.removesuffix("/v1")
        with pytest.raises(ModelError) as caught:
            await collect(adapter(base(root)), ASK)
    return caught.value, root


@pytest.mark.parametrize(("adapter", "path"), ADAPTERS)
async def test_a_404_names_the_address_and_base_url(adapter: Any, path: str) -> None:
    caught, root = await failure(adapter, LLAMA_404, lambda root: f"{root}/v2")
    assert caught.code == "INVALID_REQUEST"
    assert unserved(caught.message) == (
        "model 'wire': HTTP 404: not_found_error: File Not Found (requests go to "
        f"{root}/v2{path}, base_url + {path}: check base_url; it usually ends in /v1)"
    )


@pytest.mark.parametrize(("adapter", "path"), ADAPTERS)
async def test_the_address_is_shown_without_the_query(adapter: Any, path: str) -> None:
    caught, root = await failure(adapter, {"detail": "Not Found"}, lambda r: f"{r}?key=q-abc")
    assert f"(requests go to {root}{path}, base_url + {path}: check base_url" in caught.message
    assert "?" not in caught.message and "q-abc" not in caught.message


async def test_a_404_about_the_model_says_nothing_of_the_address() -> None:
    caught, _ = await failure(openai, {"error": "model 'qwen' not found"}, lambda r: f"{r}/v1")
    assert unserved(caught.message) == "model 'wire': HTTP 404: model 'qwen' not found"
