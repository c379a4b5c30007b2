"""Streaming overhead: µs per streamed chunk, from SSE bytes on a loopback server to a
session event.

A loopback HTTP/1.1 server (asyncio, keep-alive, chunked) answers every POST with the
same recorded-style SSE body of ``CHUNKS`` text deltas (plus finish, usage and the end
marker). Cases, measured in the same interleaved rounds, each op one whole response:

- ``floor``: httpx streams the response and ``json.loads`` each ``data:`` line; the
  least any client must do with these bytes;
- ``adapter``: the dsh adapter's ``stream()`` (its SSE parser, chunk objects), each
  chunk into the ``Assembler`` and its event data (``to_data()``), no session;
- ``dsh turn``: a real harness turn (model from ``models:`` config): adapter parse +
  assembly + one ``assistant/chunk`` session event per chunk, plus the turn's own
  events, amortised over the chunks.

Each model has an API key (a made-up one, from ``BENCH_KEY``), as every user's has: the
adapter then hides it from the streamed answer (``dsh.llm._redact_answer``), which is
part of what is measured. OpenAI-compatible and Anthropic bodies are both measured.
Target (issue 4): harness cost per chunk, ``dsh turn`` minus ``floor`` (paired per
round), ≤ 10 µs.

    python bench/stream.py [--quick] [--json PATH] [--chunks N] [--profile PATH]

``--profile PATH``: where a target is missed, that kind's ``dsh turn`` case is profiled
to ``PATH-<kind>.txt`` (bench/_profile.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _profile import profile_run
from _util import environment, measure_async, paired_ratio, parse_args, summarize, write_json

from dsh import hookimpl
from dsh.config import ModelConfig
from dsh.harness import Harness
from dsh.llm import Assembler
from dsh.llm.providers import build_model
from dsh.messages import ModelRequest, UserMessage

#: A key of the shape providers give (48 characters); never sent anywhere but loopback.
KEY_ENV = {"BENCH_KEY": "sk-bench-7f3a9c1e5b7f3a9c1e5b7f3a9c1e5bd2e4f6a8b"}
WORDS = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."]


def openai_body(chunks: int) -> bytes:
    base = {
        "id": "chatcmpl-CH2qRvb6t1fJ0xKkq8bS3aPZ1yN7e",
        "object": "chat.completion.chunk",
        "created": 1764493310,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_3f58d112f7",
    }

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return "data: " + json.dumps({**base, "choices": [choice], **extra}) + "\n\n"

    out = [event({"role": "assistant", "content": ""}, usage=None)]
    out += [event({"content": WORDS[i % len(WORDS)]}, usage=None) for i in range(chunks)]
    out.append(event({}, "stop", usage=None))
    usage = {"prompt_tokens": 20, "completion_tokens": chunks, "total_tokens": 20 + chunks}
    out.append("data: " + json.dumps({**base, "choices": [], "usage": usage}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def anthropic_body(chunks: int) -> bytes:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    message = {"id": "msg_01", "type": "message", "role": "assistant", "content": []}
    message["usage"] = {"input_tokens": 20, "output_tokens": 1}
    out = [event("message_start", {"type": "message_start", "message": message})]
    block = {"type": "text", "text": ""}
    out.append(
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
    )
    for i in range(chunks):
        delta = {"type": "text_delta", "text": WORDS[i % len(WORDS)]}
        data = {"type": "content_block_delta", "index": 0, "delta": delta}
        out.append(event("content_block_delta", data))
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    delta = {"stop_reason": "end_turn", "stop_sequence": None}
    out.append(
        event(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": chunks}},
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


class Server:
    """Answers every request with ``body`` (chunked, keep-alive)."""

    def __init__(self, body: bytes) -> None:
        size = b"%x\r\n" % len(body)
        self.response = (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + size + body + b"\r\n0\r\n\r\n"
        )
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.close()  # the handler reads EOF and returns
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                writer.write(self.response)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            self.writers.discard(writer)
            self.tasks.discard(task)


REQUEST = ModelRequest(model="m", messages=(UserMessage(content="go"),))


def floor_runner(client: httpx.AsyncClient, url: str, path: str) -> Any:
    loads = json.loads
    content = json.dumps({"model": "m", "stream": True}).encode()

    async def run(n: int) -> None:
        for _ in range(n):
            async with client.stream("POST", url + path, content=content) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        loads(line[6:])

    return run


def adapter_runner(model: Any) -> Any:
    async def run(n: int) -> None:
        for _ in range(n):
            assembler = Assembler()
            add = assembler.add
            async with aclosing(model.stream(REQUEST)) as stream:
                async for chunk in stream:
                    add(chunk)
                    chunk.to_data()
            assembler.message("m")

    return run


class LastMessageOnly:
    """Keeps the request one message long, so every turn sends the same body."""

    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"messages": request.messages[-1:]})


def turn_runner(agent: Any) -> Any:
    async def run(n: int) -> None:
        for _ in range(n):
            agent.send("go")
            await agent.when_idle()

    return run


def chunk_table(samples: dict[str, list[float]], kinds: list[str], chunks: int) -> dict[str, Any]:
    """Print the per-chunk table; returns the target's verdict per kind."""
    per_chunk = {k: summarize(v).scaled(1 / 1000 / chunks) for k, v in samples.items()}
    print(f"{chunks} chunks per response; figures per chunk (median over rounds)")
    print(f"{'case':<38} {'µs/chunk':>9} {'IQR':>15} {'- floor µs':>11} {'x floor':>8}")
    verdicts: dict[str, Any] = {}
    for kind in kinds:
        floor = samples[f"{kind}: floor (httpx + json.loads)"]
        for name in [k for k in samples if k.startswith(kind)]:
            stats = per_chunk[name]
            extra = summarize(
                [(a - b) / 1000 / chunks for a, b in zip(samples[name], floor, strict=True)]
            )
            ratio = paired_ratio(samples[name], floor).median
            shown = "(floor)" if "floor" in name else f"{extra.median:.2f}"
            print(
                f"{name:<38} {stats.median:9.2f} {stats.q1:7.2f}-{stats.q3:<7.2f} "
                f"{shown:>11} {ratio:7.2f}x"
            )
            if name.endswith("dsh turn"):
                verdicts[kind] = {
                    "harness_us_per_chunk": extra.as_dict(),
                    "pass": extra.median <= 10,
                }
    return verdicts


async def main_async(args: argparse.Namespace, settings: Any) -> int:
    """``args``: ``chunks``, ``json``; ``profile`` (optional): where a kind's target is
    missed, profile its ``dsh turn`` case to ``<profile>-<kind>.txt`` (``_profile``, with
    pyinstrument from ``args.tools`` if there)."""
    profile: Path | None = getattr(args, "profile", None)
    bodies = {"openai": openai_body(args.chunks), "anthropic": anthropic_body(args.chunks)}
    paths = {"openai": "/chat/completions", "anthropic": "/messages"}
    providers = {"openai": "openai-compatible", "anthropic": "anthropic"}
    servers: list[Server] = []
    harnesses: list[Harness] = []
    models: list[Any] = []
    cases: dict[str, Any] = {}
    client = httpx.AsyncClient()
    for kind, body in bodies.items():
        server = Server(body)
        url = await server.start()
        servers.append(server)
        config = (
            f"models:\n  m: {{provider: {providers[kind]}, base_url: '{url}', "
            "api_key_env: BENCH_KEY}\n"
        )
        harness = Harness(
            config_text=config,
            plugins=[("trim", LastMessageOnly())],
            load_entry_points=False,
            env=KEY_ENV,
        )
        await harness.__aenter__()
        harnesses.append(harness)
        agent = await harness.agents.create("bench", options={"model": "m"})
        model_config = ModelConfig(provider=providers[kind], base_url=url, api_key_env="BENCH_KEY")
        model = build_model("m", model_config, env=KEY_ENV)
        models.append(model)
        cases[f"{kind}: floor (httpx + json.loads)"] = floor_runner(client, url, paths[kind])
        cases[f"{kind}: adapter + assembler"] = adapter_runner(model)
        cases[f"{kind}: dsh turn"] = turn_runner(agent)
    try:
        samples = await measure_async(cases, settings)
        verdicts = chunk_table(samples, list(bodies), args.chunks)
        for kind, verdict in verdicts.items():
            if profile is not None and not verdict["pass"]:  # where the time goes
                run, out = cases[f"{kind}: dsh turn"], profile.with_name(f"{profile.name}-{kind}")
                turns = 5 * settings.number
                tools = getattr(args, "tools", None)
                verdict["profile"] = str(await profile_run(run, turns, out, tools))
    finally:
        for harness in reversed(harnesses):  # task groups nest: leave in reverse order
            await harness.__aexit__(None, None, None)
        for model in models:
            await model.aclose()
        await client.aclose()
        for server in servers:
            await server.stop()
    per_chunk = {k: summarize(v).scaled(1 / 1000 / args.chunks) for k, v in samples.items()}
    for kind, verdict in verdicts.items():
        cost = verdict["harness_us_per_chunk"]["median"]
        result = "PASS" if verdict["pass"] else "MISS"
        print(f"target ({kind}): dsh turn - floor ≤ 10 µs/chunk: {cost:.2f} -> {result}")
    write_json(
        args.json,
        {
            "benchmark": "stream",
            "environment": environment("dsh-core", "httpx", "anyio", "pydantic"),
            "settings": {
                "rounds": settings.rounds,
                "number": settings.number,
                "chunks": args.chunks,
            },
            "us_per_chunk": {k: v.as_dict() for k, v in per_chunk.items()},
            "targets": verdicts,
        },
    )
    print(f"results: {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=500, help="text deltas per response")
    parser.add_argument(
        "--profile", type=Path, metavar="PATH", help="where a target is missed: PATH-<kind>.txt"
    )
    args, settings = parse_args(
        parser,
        default_json=Path(__file__).parent / "results" / "stream.json",
        rounds=(15, 3),
        number=(8, 2),
        argv=argv,
    )
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
