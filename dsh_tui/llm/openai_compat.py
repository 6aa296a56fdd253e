"""The chat-completions adapter for any OpenAI-compatible server (vLLM, Ollama, llama.cpp, gateways).

One `stream(request)` is exactly one HTTP request: retries belong to the
`agent/request-error` listener (`dsh_tui.llm.retry`), which re-requests over the
same durable history. Every failure ends the stream with one terminal
`finish {kind: "error" | "aborted", failure}` chunk after whatever was already
streamed, so the loop sees a single failure shape whatever went wrong.

`DeepSeekProvider` subclasses this and changes only the profile: credentials,
thinking fields, headers and the model catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import weakref
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, cast

import httpx

from dsh_tui.harness.llm_types import (
    LlmError,
    LlmFailure,
    LlmRequest,
    StreamChunk,
    error_chain,
    make_failure,
)
from dsh_tui.harness.signal import CancelSignal

from .blocks import failed_finish
from .errors import SecretFilter, clip, http_failure, redact_all, request_id_of
from .guard import StreamAborted, StreamGuard, StreamSilent, StreamStalled
from .inflate import ACCEPT_ENCODING, BodyDecoder, UnsupportedEncoding
from .sse import SseComment, SseItem, SseParser, SseTooLarge, StreamLimits, size_text
from .translate import ChatStreamTranslator
from .wire import ReasoningReplay, sampling_fields, serialize_messages, serialize_tools

log = logging.getLogger("dsh_tui.llm")

_HEADER_SAFE_KEY = re.compile(r"[\x21-\x7e]+")
MAX_ERROR_BODY_BYTES = 64 * 1024
DRAIN_SECONDS = 1.0


def _user_agent() -> str:
    try:
        version = metadata.version("dsh-tui")
    except metadata.PackageNotFoundError:
        version = "0"
    return f"dsh-tui/{version}"


USER_AGENT = _user_agent()


class Secret:
    """An API key that renders as `***` in every repr, str and traceback local."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class Thinking:
    """The wire fields that select reasoning, and how reasoning is replayed."""

    fields: Mapping[str, Any]
    replay: ReasoningReplay


@dataclass(slots=True)
class _CallFacts:
    """What one call learned that later failure records should carry."""

    request_id: str | None = None
    sent_at: float = 0.0  # loop time the request went out (the first-byte clock)
    first_byte: bool = False  # any body byte arrived
    content: bool = False  # a data event arrived
    received: int = 0  # bytes of the reply body so far, decompressed


TOO_LARGE = "RESPONSE_TOO_LARGE"
"""The failure code of a reply past a `StreamLimits` bound (not retried: a retry would
fetch the same again)."""


async def _read_capped(response: httpx.Response) -> bytes:
    """An error body, bounded: a gateway may answer with a large HTML page (or a gzip
    bomb: it is inflated piece by piece and the rest never read)."""
    parts: list[bytes] = []
    size = 0
    try:
        decoder = BodyDecoder(response.headers.get("content-encoding"))
        async for raw in response.aiter_raw():
            for part in decoder.feed(raw):
                parts.append(part)
                size += len(part)
                if size >= MAX_ERROR_BODY_BYTES:
                    return b"".join(parts)[:MAX_ERROR_BODY_BYTES]
    except (UnsupportedEncoding, zlib.error):
        pass  # the status line still says what went wrong
    return b"".join(parts)[:MAX_ERROR_BODY_BYTES]


async def _drain(reads: AsyncGenerator[bytes, None]) -> None:
    """Read what follows `[DONE]` (normally just the end of the body), ignoring it.

    A fully read response lets httpx return the connection to the pool instead
    of closing it; the bound keeps a server that never ends the body from
    delaying the finish.
    """
    total = 0
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for part in reads:
                total += len(part)
                if total > MAX_ERROR_BODY_BYTES:
                    break
    except (TimeoutError, httpx.HTTPError, OSError):
        pass


async def _close_response(response: Any) -> None:
    if isinstance(response, httpx.Response):
        await response.aclose()


class OpenAICompatibleProvider:
    """Streams `POST {base_url}/chat/completions` as harness StreamChunks.

    Timeouts are in seconds, each bounding one kind of waiting:
    `connect_timeout` the TCP/TLS connection; `first_byte_timeout` the time from
    sending the request to the first byte of the response body (headers included);
    `read_timeout` the gap between two reads once bytes flow (keep-alive comments
    count: the server is alive); `idle_timeout` the content-progress watchdog, the
    longest wait for the next data event (comments do not count). A server that
    answers nothing fails the attempt with `TIMEOUT`, which the retry policy
    retries; after `silent_attempts` such attempts in a row with no content the
    failure is `NO_RESPONSE`, which is not retried, so a silent server is reported
    after about 3 × 25 s + backoff ≈ 77 s by default instead of half an hour.
    `client` lets a caller share one `httpx.AsyncClient`; when omitted the provider
    owns one per event loop and `aclose()` closes it.

    Profile switches for servers that differ (docs/contract.md §11.3):
    `reasoning_field` names the field reasoning is replayed under (None: never),
    `max_tokens_field` the output-cap field, `stream_usage` whether to ask for
    usage with `stream_options`, `extra_body`/`extra_headers` are merged into
    every request (e.g. `{"chat_template_kwargs": {"enable_thinking": False}}`).
    `limits` bounds one reply (line, event and body sizes; `sse.StreamLimits`).
    """

    name = "openai-compatible"
    label = "OpenAI-compatible server"

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 connect_timeout: float = 10.0, read_timeout: float = 30.0,
                 write_timeout: float = 30.0, pool_timeout: float = 30.0,
                 idle_timeout: float | None = 300.0, client: httpx.AsyncClient | None = None,
                 first_byte_timeout: float | None = 25.0, silent_attempts: int = 3,
                 default_model: str | None = None,
                 context_windows: Mapping[str, int] | None = None,
                 reasoning_field: str | None = "reasoning_content",
                 max_tokens_field: str = "max_tokens", stream_usage: bool = True,
                 extra_body: Mapping[str, Any] | None = None,
                 extra_headers: Mapping[str, str] | None = None,
                 retry_policy: Any = None, limits: StreamLimits | None = None) -> None:
        if httpx.URL(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._api_key = Secret(api_key) if api_key is not None else None
        # The guard enforces the first-byte and between-read limits itself (with messages
        # that say which); httpx's read timeout is only a backstop behind them.
        backstop = max((t for t in (first_byte_timeout, read_timeout) if t is not None),
                       default=None)
        self.timeout = httpx.Timeout(connect=connect_timeout,
                                     read=None if backstop is None else backstop + 5.0,
                                     write=write_timeout, pool=pool_timeout)
        self.read_timeout = read_timeout
        self.first_byte_timeout = first_byte_timeout
        self.idle_timeout = idle_timeout
        self.silent_attempts = max(1, silent_attempts)
        self._silent_streak = 0  # attempts in a row that timed out with no content
        self.default_model = default_model
        self.context_windows: dict[str, int] = dict(context_windows or {})
        self.reasoning_field = reasoning_field
        self.max_tokens_field = max_tokens_field
        self.stream_usage = stream_usage
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.extra_headers: dict[str, str] = dict(extra_headers or {})
        self.retry_policy = retry_policy
        self.limits = limits if limits is not None else StreamLimits()
        """Read by the loop and handed to `agent/request-error` listeners (None: their default)."""
        self._shared_client = client
        self._owned: tuple[weakref.ref[asyncio.AbstractEventLoop], httpx.AsyncClient] | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key is not None else "none"
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key=<{key}>)"

    # -- provider extras ------------------------------------------------------------------------

    def context_window(self, model: str) -> int | None:
        return self.context_windows.get(model)

    def prepare(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, bool]]:
        """Fill a missing model with the default; returns (config, adapter-default markers)."""
        resolved = dict(config)
        if not resolved.get("model") and self.default_model:
            resolved["model"] = self.default_model
        return resolved, {}

    # -- request ----------------------------------------------------------------------------------

    def thinking(self, request: Mapping[str, Any]) -> Thinking:
        """Generic servers: pass an effort through (`off` → Ollama's `none`)."""
        effort = request.get("reasoningEffort")
        fields: dict[str, Any] = {}
        if isinstance(effort, str) and effort:
            fields["reasoning_effort"] = "none" if effort == "off" else effort
        return Thinking(fields, ReasoningReplay(self.reasoning_field, always=False))

    def build_body(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON body of one request; raises LlmError for requests that cannot be sent."""
        model = request.get("model") or self.default_model
        if not model:
            raise LlmError(make_failure(f"{self.label}: the request names no model",
                                        "INVALID_REQUEST"))
        thinking = self.thinking(request)
        body: dict[str, Any] = {
            "model": model,
            "messages": serialize_messages(request.get("messages") or (),
                                           system=request.get("system"), replay=thinking.replay),
            "stream": True,
        }
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        body.update(thinking.fields)
        tools = serialize_tools(request.get("tools"))
        if tools:
            body["tools"] = tools
        body.update(sampling_fields(request, max_tokens_field=self.max_tokens_field))
        body.update(self.extra_body)
        return body

    def credential(self) -> str | None:
        """The key to send, or None; a supplied key no header can carry is refused."""
        if self._api_key is None:
            return None
        key = self._api_key.reveal().strip()
        if not key:
            return None
        if not _HEADER_SAFE_KEY.fullmatch(key):
            raise LlmError(make_failure(
                f"the {self.label} API key contains characters an HTTP header cannot carry "
                "(only printable ASCII without spaces)", "INVALID_CREDENTIAL"))
        return key

    def headers(self, request: Mapping[str, Any], key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                   "Accept-Encoding": ACCEPT_ENCODING, "User-Agent": USER_AGENT,
                   **self.extra_headers}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    # -- transport ----------------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._shared_client is not None:
            return self._shared_client
        loop = asyncio.get_running_loop()
        if self._owned is not None:
            owner, client = self._owned
            if owner() is loop and not client.is_closed:
                return client
        # Pooled connections belong to one event loop; a new loop gets a new client.
        client = httpx.AsyncClient(timeout=self.timeout)
        self._owned = (weakref.ref(loop), client)
        return client

    async def aclose(self) -> None:
        """Close the client this provider created (a shared client is the caller's)."""
        if self._owned is not None:
            _, client = self._owned
            self._owned = None
            await client.aclose()

    # -- streaming --------------------------------------------------------------------------------

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        """One model response as StreamChunks, ending with exactly one `finish`.

        Nothing the server sent reaches the caller with the API key in it: a proxy may
        echo the key into a header, an error body or the streamed text itself.
        """
        signal: CancelSignal | None = request.get("signal")
        guard = StreamGuard(signal, self.idle_timeout)
        facts = _CallFacts()
        key: str | None = None
        secrets = SecretFilter(self._secrets(None))
        try:
            try:
                key = self.credential()
                secrets = SecretFilter(self._secrets(key))
                exchange = self._exchange(request, key, guard, facts)
            except LlmError as error:
                yield failed_finish(self._scrub(error.failure, key, facts), aborted=guard.aborted)
                return
            async with contextlib.aclosing(exchange) as chunks:
                try:
                    async for chunk in chunks:
                        for out in secrets.feed(chunk):
                            yield out
                except LlmError as error:
                    failure = self._scrub(self._silence(error.failure, facts), key, facts)
                    log.info("%s request failed: %s %s", self.name, failure["code"],
                             failure["message"])
                    for out in secrets.feed(failed_finish(failure, aborted=guard.aborted)):
                        yield out
        finally:
            guard.close()

    def _silence(self, failure: LlmFailure, facts: _CallFacts) -> LlmFailure:
        """Count attempts that timed out without content; past the budget, stop retrying."""
        if facts.content or failure.get("code") != "TIMEOUT":
            return failure
        self._silent_streak += 1
        if self._silent_streak < self.silent_attempts:
            return failure
        self._silent_streak = 0
        return make_failure(f"{failure['message']} ({self.silent_attempts} attempts in a row "
                            "with no answer; not retried)", "NO_RESPONSE")

    def _secrets(self, key: str | None) -> tuple[str, ...]:
        """What must never be stored or shown: the key, and a password in the base URL."""
        password = httpx.URL(self.base_url).password
        return tuple(s for s in (key, password) if s)

    def _scrub(self, failure: LlmFailure, key: str | None, facts: _CallFacts) -> LlmFailure:
        secrets = self._secrets(key)
        scrubbed = redact_all(dict(failure), secrets)
        scrubbed["message"] = str(scrubbed.get("message", "")) or scrubbed["code"]
        if facts.request_id and "requestId" not in scrubbed:
            scrubbed["requestId"] = redact_all(facts.request_id, secrets)
        return scrubbed  # type: ignore[no-any-return]

    async def _exchange(self, request: Mapping[str, Any], key: str | None, guard: StreamGuard,
                        facts: _CallFacts) -> AsyncGenerator[StreamChunk, None]:
        if guard.aborted:
            raise LlmError(make_failure(f"{self.label} request aborted by caller", "ABORTED"))
        fields = self.build_body(request)
        cap = fields.get(self.max_tokens_field)
        body = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        client = self._client()
        outgoing = client.build_request("POST", f"{self.base_url}/chat/completions",
                                        content=body, headers=self.headers(request, key),
                                        timeout=self.timeout)
        log.debug("%s request: model=%s messages=%d", self.name, request.get("model"),
                  len(request.get("messages") or ()))
        facts.sent_at = asyncio.get_running_loop().time()
        response = await self._wait(guard, client.send(outgoing, stream=True), _close_response,
                                    limit=self._first_byte_left(facts))
        try:
            facts.request_id = request_id_of(response.headers)
            if not response.is_success:
                raw = await self._wait(guard, _read_capped(response), limit=self.read_timeout)
                raise LlmError(http_failure(response.status_code, response.reason_phrase, raw,
                                            response.headers, self.label))
            translator = ChatStreamTranslator(
                self.label, max_tokens=cap if type(cap) is int else None)
            async with contextlib.aclosing(self._translate(response, guard, facts,
                                                           translator)) as chunks:
                async for chunk in chunks:
                    yield chunk
        finally:
            await response.aclose()

    def _first_byte_left(self, facts: _CallFacts) -> float | None:
        if self.first_byte_timeout is None:
            return None
        waited = asyncio.get_running_loop().time() - facts.sent_at
        return max(0.0, self.first_byte_timeout - waited)

    async def _translate(self, response: httpx.Response, guard: StreamGuard,
                         facts: _CallFacts, translator: ChatStreamTranslator
                         ) -> AsyncGenerator[StreamChunk, None]:
        parser = SseParser(self.limits)
        try:
            decoder = BodyDecoder(response.headers.get("content-encoding"))
        except UnsupportedEncoding as error:
            raise LlmError(make_failure(f"{self.label} answered with an {error}",
                                        "MALFORMED_RESPONSE")) from None
        reads = cast(AsyncGenerator[bytes, None], response.aiter_raw())
        try:
            while True:
                try:
                    limit = self.read_timeout if facts.first_byte else self._first_byte_left(facts)
                    data = await self._wait(guard, anext(reads, None), limit=limit,
                                            first=not facts.first_byte)
                except LlmError as error:
                    if translator.finished and error.code == "TIMEOUT":
                        break  # the answer is complete; only the terminator is missing
                    raise
                if data is None:
                    break
                facts.first_byte = True
                for item in self._items(parser, decoder, data, facts):
                    if isinstance(item, SseComment) or not item.data.strip():
                        # Transport liveness only, no content progress: a comment, or an
                        # event whose data is empty (dispatched by the SSE rules, means nothing).
                        continue
                    guard.progress()
                    facts.content = True
                    self._silent_streak = 0
                    if item.data.strip() == "[DONE]":
                        closing = translator.close()
                        await _drain(reads)
                        for chunk in closing:
                            yield chunk
                        return
                    try:
                        payload = json.loads(item.data)
                    except ValueError:
                        raise LlmError(make_failure(
                            f"malformed SSE payload: {clip(item.data[:120])}",
                            "MALFORMED_RESPONSE")) from None
                    for chunk in translator.feed(payload):
                        yield chunk
        finally:
            await reads.aclose()
        parser.close()
        if translator.finished:
            for chunk in translator.close():  # EOF after the finish chunk: complete
                yield chunk
            return
        raise LlmError(make_failure(f"{self.label} stream ended before [DONE]",
                                    "STREAM_CLOSED"))

    def _items(self, parser: SseParser, decoder: BodyDecoder, data: bytes,
               facts: _CallFacts) -> Iterator[SseItem]:
        """The SSE items in one raw read, inflated piece by piece and held to `limits`."""
        try:
            for piece in decoder.feed(data):
                facts.received += len(piece)
                if facts.received > self.limits.reply:
                    raise SseTooLarge(f"a reply larger than {size_text(self.limits.reply)}")
                yield from parser.feed(piece)
        except SseTooLarge as error:
            raise LlmError(make_failure(f"{self.label} sent {error}; the rest was not read",
                                        TOO_LARGE)) from None
        except zlib.error as error:
            raise LlmError(make_failure(f"{self.label} sent a corrupt compressed body "
                                        f"({error})", "MALFORMED_RESPONSE")) from None

    async def _wait(self, guard: StreamGuard, awaitable: Any, on_orphan: Any = None, *,
                    limit: float | None = None, first: bool = True) -> Any:
        """One guarded wait, with transport failures normalised to failure records."""
        try:
            return await guard.run(awaitable, on_orphan, limit)
        except StreamSilent as silent:
            what = "no response" if first else "nothing more"
            budget = self.first_byte_timeout if first else self.read_timeout
            raise LlmError(make_failure(
                f"{self.label} sent {what} for {budget or silent.limit:g}s", "TIMEOUT")) from None
        except StreamAborted:
            raise LlmError(make_failure(f"{self.label} request aborted by caller",
                                        "ABORTED")) from None
        except StreamStalled:
            raise LlmError(make_failure(
                f"{self.label} stream idle timeout: no content for {self.idle_timeout:g}s",
                "TIMEOUT")) from None
        except httpx.TimeoutException as error:
            raise LlmError(make_failure(
                f"{self.label} request to {self.base_url} timed out: {error_chain(error)}",
                "TIMEOUT")) from None
        except (httpx.HTTPError, httpx.StreamError, OSError) as error:
            raise LlmError(make_failure(
                f"{self.label} request to {self.base_url} failed: {error_chain(error)}",
                "TRANSPORT")) from None
