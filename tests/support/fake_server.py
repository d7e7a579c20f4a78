"""A small OpenAI-compatible chat-completions server on 127.0.0.1 that answers as a script says.

For tests, benchmarks and trying the pipeline without a GPU. By default it answers every request
at once with a valid answer made from the request's ``response_format`` JSON schema. A script (a
function of the request) can instead answer with given JSON or text, an HTTP error (429 with
Retry-After, 500, ...), a delay, or by dropping the connection without an answer.

    with FakeLLMServer(script) as server:        # in-process, on a thread
        judge base URL = server.base_url

    python -m tests.support.fake_server --port 8001     # standalone, default answers
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TEXT = "To do it."  # starts with "To " and ends with a period: it passes IntentGrasp's statement rules


@dataclass
class FakeRequest:
    body: dict
    #: 1 for the first request with these messages, 2 for the next, and so on.
    attempt: int
    #: Header names in lower case.
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def schema(self) -> dict:
        return ((self.body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    delay: float = 0.0
    drop: bool = False
    retry_after: float | None = None
    finish_reason: str = "stop"
    error: str = ""
    #: Sent as the whole body instead of a chat completion (a proxy's page, a broken server).
    body: bytes | None = None

    @classmethod
    def json(cls, data: Any, **options: Any) -> Reply:
        return cls(content=json.dumps(data), **options)

    @classmethod
    def text(cls, content: str, **options: Any) -> Reply:
        return cls(content=content, **options)

    @classmethod
    def http_error(cls, status: int, message: str = "scripted error", **options: Any) -> Reply:
        return cls(status=status, error=message, **options)

    @classmethod
    def raw(cls, body: bytes, **options: Any) -> Reply:
        return cls(body=body, **options)

    @classmethod
    def dropped(cls) -> Reply:
        return cls(drop=True)


def answer_from_schema(schema: dict, rng: random.Random, position: int = 0) -> Any:
    """A valid instance of ``schema`` (the subset structured output uses).

    Arrays take their minimum length, and enumerated values inside an array cycle by position, so a
    list of judgements numbered by enum covers each number once.
    """
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        values = schema["enum"]
        return values[position % len(values)] if position else rng.choice(values)
    kind = schema.get("type")
    if kind == "object":
        return {name: answer_from_schema(spec, rng, position) for name, spec in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        return [answer_from_schema(schema.get("items", {}), rng, position=i + 1) for i in range(count)]
    if kind == "integer":
        return schema.get("minimum", 0)
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return DEFAULT_TEXT


def valid_answer(request: FakeRequest) -> Reply:
    """The default script: a schema-valid answer, the same for the same prompt."""
    rng = random.Random(request.text)
    return Reply.json(answer_from_schema(request.schema, rng))


Script = Callable[[FakeRequest], Reply]


@dataclass
class FakeLLMServer:
    script: Script = valid_answer
    host: str = "127.0.0.1"
    port: int = 0
    requests: list[FakeRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    record: bool = True

    def __post_init__(self) -> None:
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def attempts_for(self, needle: str) -> int:
        """How many requests so far had ``needle`` in their messages."""
        return sum(1 for r in self.requests if needle in r.text)

    # -- running ----------------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        self._thread = threading.Thread(target=self._run, name="fake-llm-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fake LLM server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._connection, self.host, self.port))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            # Requests still sleeping on a scripted delay are cancelled, so their connections close cleanly.
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

    def serve_forever(self) -> None:
        """Run on this thread until interrupted (the standalone mode)."""
        self._run()

    # -- HTTP -------------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                headers = {}
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", 0))
                raw = await reader.readexactly(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    # As a real server would: refuse the request, keep serving the connection.
                    writer.write(self._response(FakeRequest({}, 0), Reply.http_error(400, "body is not JSON")))
                    continue
                if not await self._answer(body, headers, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _answer(self, body: dict, headers: dict[str, str], writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection was dropped on purpose."""
        key = json.dumps(body.get("messages", []), sort_keys=True)
        with self._lock:
            self._seen[key] += 1
            request = FakeRequest(body=body, attempt=self._seen[key], headers=headers)
            if self.record:
                self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.script(request)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.drop:
                writer.transport.abort()
                return False
            writer.write(self._response(request, reply))
            await writer.drain()
            return True
        finally:
            with self._lock:
                self.in_flight -= 1

    @staticmethod
    def _response(request: FakeRequest, reply: Reply) -> bytes:
        headers = {"Content-Type": "application/json"}
        if reply.status != 200:
            payload = {"error": {"message": reply.error, "type": "scripted", "code": reply.status}}
            if reply.retry_after is not None:
                headers["Retry-After"] = str(reply.retry_after)
        else:
            content = reply.content or ""
            payload = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": reply.finish_reason,
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": len(request.text.split()),
                    "completion_tokens": len(content.split()),
                    "total_tokens": len(request.text.split()) + len(content.split()),
                },
            }
        data = json.dumps(payload).encode() if reply.body is None else reply.body
        headers["Content-Length"] = str(len(data))
        head = f"HTTP/1.1 {reply.status} {'OK' if reply.status == 200 else 'Error'}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        return head.encode() + b"\r\n" + data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A local OpenAI-compatible server with schema-valid answers.")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    server = FakeLLMServer(port=args.port, record=False)
    threading.Thread(target=lambda: (server._ready.wait(), print(server.base_url, flush=True)), daemon=True).start()
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
