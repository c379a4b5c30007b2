"""Failures over real HTTP: error codes, retries before the first byte only, the idle-read
timeout, truncated streams and aborts that close the connection."""

from __future__ import annotations

import email.utils
import json
import time
from contextlib import aclosing
from typing import Any

import anyio
import pytest
from llm_wire import Reply, WireServer, by_event, closed_port, collect, error, recorded, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import TextDelta
from dsh.llm._http import HttpModel
from dsh.llm._retry_after import retry_after
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-live-SECRET-0123456789"
TEXT = recorded("llamacpp_text_crlf.sse")


def openai(url: str, **settings: Any) -> OpenAICompatibleModel:
    settings.setdefault("api_key_env", "WIRE_KEY")
    config = ModelConfig(provider="openai-compatible", model="m", base_url=url, **settings)
    return OpenAICompatibleModel("wire", config, env={"WIRE_KEY": KEY}, backoff=0.01)


def anthropic(url: str, **settings: Any) -> AnthropicModel:
    settings.setdefault("api_key_env", "WIRE_KEY")
    config = ModelConfig(provider="anthropic", model="claude", base_url=url, **settings)
    return AnthropicModel("wire", config, env={"WIRE_KEY": KEY}, backoff=0.01)


async def fails(model: HttpModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await collect(model, ASK)
    assert KEY not in caught.value.message
    assert "\n" not in caught.value.message
    return caught.value


# -- streams that end without a finish ------------------------------------------------


async def test_a_stream_without_done_is_stream_closed() -> None:
    # cut before the chunk with finish_reason: a finished answer without [DONE] is whole
    # (test_compat_study.py)
    cut = TEXT.split(b'"finish_reason":"stop"')[0].rsplit(b"data: ", 1)[0]
    assert b'"stop"' not in cut and cut.endswith(b"\r\n\r\n")
    async with WireServer([sse(cut)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "STREAM_CLOSED"
    assert "[DONE]" in err.message


async def test_an_anthropic_stream_without_message_stop_is_stream_closed() -> None:
    # cut before its message_delta: no stop_reason came (one that came, with nothing
    # after it, makes the answer whole: test_finish_without_end.py)
    body = recorded("anthropic_max_tokens.sse").split(b"event: message_delta")[0]
    async with WireServer([sse(body)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "STREAM_CLOSED"


async def test_a_connection_dropped_mid_body_is_stream_closed_and_not_retried() -> None:
    async with WireServer([sse(by_event(TEXT)[:3], then="drop"), sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1  # never replay a half-streamed answer
    assert err.code == "STREAM_CLOSED"


async def test_malformed_json_in_a_chunk() -> None:
    body = [by_event(TEXT)[0], b'data: {"choices": [{"delta": {"content": "x"\n\n']
    async with WireServer([sse(body)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert '{"choices"' in err.message


async def test_a_json_answer_where_a_stream_was_expected_is_malformed() -> None:
    # JSON of no answer's shape (a whole answer is read: test_unlabelled_answers.py)
    reply = error(200, {"result": {"content": "hi"}})
    async with WireServer([reply]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "text/event-stream" in err.message


# -- HTTP errors and retries -----------------------------------------------------------


async def test_429_with_retry_after_is_retried_then_succeeds() -> None:
    limited = error(429, {"error": {"message": "slow down"}}, {"retry-after": "0.3"})
    async with WireServer([limited, sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
        first, second = server.requests
    assert message.text.startswith("Voilà")
    assert second.at - first.at >= 0.3  # the server's wait was honoured
    assert second.body == first.body


async def test_each_retry_is_logged_as_a_warning_saying_why_and_when(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limited = error(429, {"error": {"message": "slow down"}}, {"retry-after": "0.1"})
    with caplog.at_level("WARNING", logger="dsh.llm._http"):
        async with WireServer([limited, sse(TEXT)]) as server:
            await collect(openai(server.url), ASK)
    (record,) = caplog.records
    assert record.levelname == "WARNING"
    message = record.getMessage()
    assert "slow down" in message and "(RATE_LIMIT); retrying in 0.1 s (1 of " in message
    assert KEY not in message


async def test_429_exhausted_is_rate_limit_with_retry_after() -> None:
    limited = error(429, {"error": {"message": "Rate limit reached"}}, {"retry-after-ms": "20"})
    async with WireServer([limited] * 3) as server:
        err = await fails(openai(server.url, max_retries=2))
        assert len(server.requests) == 3
    assert err.code == "RATE_LIMIT"
    assert err.retry_after == pytest.approx(0.02)
    assert "Rate limit reached" in err.message


async def test_a_retry_after_longer_than_max_wait_is_not_waited_for() -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": "3600"})
    async with WireServer([limited, sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert (err.code, err.retry_after) == ("RATE_LIMIT", 3600)


async def test_insufficient_quota_is_not_retried() -> None:
    payload = {"error": {"message": "You exceeded your quota", "code": "insufficient_quota"}}
    async with WireServer([error(429, payload), sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert err.code == "RATE_LIMIT"


async def test_500_then_success() -> None:
    async with WireServer([error(500, b"upstream crashed"), sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
        assert len(server.requests) == 2
    assert message.stop_reason == "stop"


async def test_a_503_with_retry_after_waits_that_long() -> None:
    busy = error(503, {"error": {"message": "busy"}}, {"retry-after": "0.3"})
    async with WireServer([busy, sse(TEXT)]) as server:
        await collect(openai(server.url), ASK)
        first, second = server.requests
    assert second.at - first.at >= 0.3


async def test_5xx_exhausted_is_server_and_max_retries_bounds_the_tries() -> None:
    async with WireServer([error(503, {"error": {"message": "busy"}})] * 5) as server:
        err = await fails(openai(server.url, max_retries=1))
        assert len(server.requests) == 2
    assert err.code == "SERVER"
    assert "HTTP 503" in err.message


async def test_400_is_invalid_request_and_not_retried() -> None:
    payload = {"error": {"message": "Unknown parameter: 'foo'.", "type": "invalid_request_error"}}
    async with WireServer([error(400, payload), sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert err.code == "INVALID_REQUEST"
    assert "Unknown parameter" in err.message


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_401_is_auth_and_the_key_never_shows(adapter: Any) -> None:
    payload = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    async with WireServer([error(401, payload)]) as server:
        err = await fails(adapter(server.url))
        assert len(server.requests) == 1
    assert err.code == "AUTH"
    assert "Incorrect API key provided: ***" in err.message


CONTEXT_BODIES = {
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5210,
            "n_ctx": 4096,
        }
    },
    "openai": {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130563 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "anthropic": {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 208310 tokens > 200000 maximum",
        },
    },
    "vllm": {
        "object": "error",
        "message": "This model's maximum context length is 2048 tokens. However, you "
        "requested 2100 tokens (2000 in the messages, 100 in the completion).",
        "type": "BadRequestError",
        "code": 400,
    },
}


@pytest.mark.parametrize("server_kind", list(CONTEXT_BODIES))
async def test_context_window_errors_are_recognised(server_kind: str) -> None:
    adapter = anthropic if server_kind == "anthropic" else openai
    async with WireServer([error(400, CONTEXT_BODIES[server_kind])]) as server:
        err = await fails(adapter(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"


async def test_a_context_error_inside_a_llamacpp_stream() -> None:
    body = b"data: " + json.dumps(CONTEXT_BODIES["llama.cpp"]).encode() + b"\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"


async def test_an_anthropic_error_event_mid_stream() -> None:
    async with WireServer([sse(recorded("anthropic_overloaded.sse"))]) as server:
        err = await fails(anthropic(server.url))
        assert len(server.requests) == 1
    assert err.code == "SERVER"
    assert "Overloaded" in err.message


async def test_nothing_listening_is_transport_after_the_retries() -> None:
    err = await fails(openai(closed_port(), max_retries=1))
    assert err.code == "TRANSPORT"


async def test_a_missing_key_variable_is_a_one_line_auth_error_naming_where_it_is_set() -> None:
    async with WireServer([sse(TEXT)]) as server:
        config = ModelConfig(provider="openai", base_url=server.url, api_key_env="NOT_SET_KEY")
        model = OpenAICompatibleModel("gpt", config, env={})
        err = await fails(model)
        assert server.requests == []
    assert err.code == "AUTH"
    assert "\n" not in err.message
    # named: the config refuses what is not a variable's name, and this is no key
    assert "the environment variable NOT_SET_KEY (models.gpt.api_key_env)" in err.message


async def test_config_headers_are_sent_and_may_override_the_defaults() -> None:
    headers = {"x-trace": "t1", "anthropic-version": "2099-01-01"}
    async with WireServer([sse(recorded("anthropic_max_tokens.sse"))]) as server:
        await collect(anthropic(server.url, headers=headers), ASK)
    sent = server.requests[0].headers
    assert (sent["x-trace"], sent["anthropic-version"]) == ("t1", "2099-01-01")
    assert sent["content-type"] == "application/json"


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "2"}) == 2
    assert retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    date = "Wed, 21 Oct 2026 07:28:05 GMT"
    now = email.utils.parsedate_to_datetime(date).timestamp() - 4
    assert retry_after({"retry-after": date}, now=now) == pytest.approx(4)
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_the_key_is_not_in_the_models_repr() -> None:
    model = openai("http://127.0.0.1:1/v1")
    assert model.api_key() == KEY
    assert KEY not in repr(model)
    assert KEY not in repr(model.config)
    assert KEY not in str(model.config.model_dump())


# -- timeouts and aborts ---------------------------------------------------------------


async def test_a_stalled_stream_times_out_on_the_idle_read_timeout() -> None:
    async with WireServer([sse(by_event(TEXT)[:2], then="stall")]) as server:
        started = time.monotonic()
        err = await fails(openai(server.url, read_timeout=0.3, timeout=30))
        took = time.monotonic() - started
        with anyio.fail_after(2):
            await server.disconnected.wait()
    assert err.code == "TIMEOUT"
    assert 0.3 <= took < 5


async def test_a_server_that_never_answers_times_out_and_is_not_asked_again() -> None:
    async with WireServer([Reply(status=0), sse(TEXT)]) as server:
        err = await fails(openai(server.url, read_timeout=0.3))
        assert len(server.requests) == 1
    assert err.code == "TIMEOUT"
    assert "no response" in err.message


async def test_a_request_waiting_for_a_free_connection_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model keeps at most MAX_CONNECTIONS connections: a request beyond them waits for
    one within the timeout, and its error says that it never reached the server."""
    monkeypatch.setattr("dsh.llm._pool.MAX_CONNECTIONS", 1)
    async with WireServer([sse(by_event(TEXT)[:1], then="stall"), sse(TEXT)]) as server:
        model = openai(server.url, timeout=0.5, read_timeout=30, max_retries=0)

        async def first() -> None:
            with pytest.raises(ModelError):  # stalled; cancelled below
                await collect(model, ASK)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            with anyio.fail_after(5):
                while not server.requests:  # noqa: ASYNC110 - the server has no event for it
                    await anyio.sleep(0.01)  # then the only connection is busy
            with pytest.raises(ModelError) as caught:
                await collect(model, ASK)
            tg.cancel_scope.cancel()
        assert len(server.requests) == 1  # the second never left
    assert caught.value.code == "TIMEOUT"
    assert caught.value.message == (
        "model 'wire': no free connection within 0.5 s: all 100 of this model's "
        "connections are busy with other requests (models.wire.timeout; PoolTimeout)"
    )


async def test_abort_mid_stream_closes_the_connection_promptly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the loop does: cancel the step's scope while iterating, then aclose(). Promptly:
    no timeout, drain or idle expiry could close the stalled connection within the wait,
    and the model stays open meanwhile, so the disconnect is the stream's closing (not
    timed: a loaded machine may take long to see it)."""
    monkeypatch.setattr("dsh.llm._http._DRAIN_WAIT", 3600)
    monkeypatch.setattr("dsh.llm._pool.KEEPALIVE_EXPIRY", 3600)
    async with WireServer([sse(by_event(TEXT)[:3], then="stall")]) as server:
        model = openai(server.url, timeout=3600, read_timeout=3600)
        await model.__aenter__()
        got: list[object] = []
        stream = model.stream(ASK)
        with anyio.CancelScope() as scope:
            async for chunk in stream:
                got.append(chunk)
                if isinstance(chunk, TextDelta):
                    scope.cancel()  # the abort lands while the loop awaits the next chunk
        await stream.aclose()
        with anyio.fail_after(30):
            await server.disconnected.wait()
        await model.aclose()
    # cancellation lands at the next real wait: a chunk that came in the same read may
    # still be given, one that needs another read is not (the server's writes can be split)
    assert got in ([TextDelta("Voilà")], [TextDelta("Voilà"), TextDelta(": 3 ")])


async def test_closing_the_stream_between_chunks_closes_the_connection() -> None:
    server = WireServer([sse(by_event(TEXT)[:3], then="stall")])
    async with server, openai(server.url) as model:
        async with aclosing(model.stream(ASK)) as stream:
            async for _ in stream:
                break
        with anyio.fail_after(2):
            await server.disconnected.wait()


async def test_finished_streams_reuse_one_connection_and_aclose_releases_it() -> None:
    async with WireServer([sse(TEXT), sse(TEXT)]) as server:
        async with openai(server.url) as model:
            await collect(model, ASK, keep_open=True)
            await collect(model, ASK, keep_open=True)
            assert not server.client_closed.is_set()
        with anyio.fail_after(2):
            await server.client_closed.wait()
        assert server.connections == 1
