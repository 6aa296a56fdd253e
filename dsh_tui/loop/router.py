"""The LLM seam: picks the provider for a request and normalises its failures.

Whatever goes wrong inside a provider (no such provider, a raise while
dispatching or streaming), the loop sees one terminal `finish` chunk of kind
`error` or `aborted`, so failure handling lives in one place: the
`agent/request-error` waterfall.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_tui.harness.llm_types import LlmError, LlmProvider, failure_of, make_failure
from dsh_tui.harness.signal import Cancelled


@dataclass
class PreparedCall:
    provider: LlmProvider
    config: dict[str, Any]
    adapter_defaults: dict[str, bool] = field(default_factory=dict)
    context_window: int | None = None
    retry_policy: Any = None


class LlmRouter:
    """Providers by name; `prepare` resolves one, `stream` runs it behind the seam."""

    def __init__(self, providers: Mapping[str, LlmProvider] | None = None) -> None:
        self.providers: dict[str, LlmProvider] = dict(providers or {})

    def add(self, name: str, provider: LlmProvider) -> None:
        self.providers[name] = provider

    def resolve(self, name: str) -> LlmProvider:
        provider = self.providers.get(name)
        if provider is None and name == "deepseek-official":  # upstream's route name
            provider = self.providers.get("deepseek")
        if provider is None:
            known = ", ".join(sorted(self.providers)) or "none"
            raise LlmError(make_failure(f'no adapter for provider "{name}" (known: {known})',
                                        "NO_ADAPTER"))
        return provider

    def prepare(self, config: Mapping[str, Any]) -> PreparedCall:
        provider = self.resolve(str(config.get("provider", "")))
        resolved = dict(config)
        defaults: dict[str, bool] = {}
        prepare = getattr(provider, "prepare", None)
        if callable(prepare):
            resolved, defaults = prepare(dict(config))
        window = None
        context_window = getattr(provider, "context_window", None)
        if callable(context_window):
            window = context_window(str(resolved.get("model", "")))
        return PreparedCall(provider, resolved, defaults, window,
                            getattr(provider, "retry_policy", None))

    async def stream(self, request: Mapping[str, Any], prepared: PreparedCall | None
                     ) -> AsyncIterator[dict[str, Any]]:
        signal = request.get("signal")
        iterator = None
        try:
            provider = prepared.provider if prepared is not None else \
                self.resolve(str(request.get("provider", "")))
            iterator = provider.stream(request)  # type: ignore[arg-type]
            if inspect.isawaitable(iterator):
                iterator = await iterator
            async for chunk in iterator:
                yield chunk
                if chunk.get("type") == "finish":
                    return
        except GeneratorExit:
            raise
        except BaseException as error:
            import asyncio

            if isinstance(error, asyncio.CancelledError) and not (
                    signal is not None and signal.aborted):
                raise
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            aborted = (signal is not None and signal.aborted) or isinstance(error, Cancelled)
            if isinstance(error, (Cancelled, asyncio.CancelledError)):
                failure = make_failure("request aborted", "ABORTED")
            else:
                failure = failure_of(error)
            kind = "aborted" if aborted or failure.get("code") == "ABORTED" else "error"
            yield {"type": "finish", "reason": {"kind": kind, "failure": failure}}
        finally:
            close = getattr(iterator, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:
                    pass
