"""The DeepSeek profile of the chat-completions adapter.

It differs from a generic OpenAI-compatible server only where upstream's `llm-deepseek`
package does (docs/contract.md §11, item 1): a required key, the thinking switch and
reasoning effort, reasoning passed back on every assistant message, and V4's context and
output sizes. The rules are on `DeepSeekProvider`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import httpx

from dsh_tui.harness.llm_types import LlmError, make_failure

from .openai_compat import OpenAICompatibleProvider, Thinking
from .sse import StreamLimits
from .wire import ReasoningReplay

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-v4-flash"
MODELS = ("deepseek-v4-flash", "deepseek-v4-pro")
DEFAULT_CONTEXT_WINDOW = 1_000_000
DEFAULT_MAX_TOKENS = 256_000
REASONING_EFFORTS = ("off", "low", "high", "max")
API_KEY_ENV = "DEEPSEEK_API_KEY"

ThinkingMode = Literal["enabled", "disabled"]


class DeepSeekProvider(OpenAICompatibleProvider):
    """`deepseek`: chat completions against api.deepseek.com (or a compatible proxy).

    `thinking` pins the deployment's thinking mode (None: the server default,
    enabled); `default_effort` and `max_tokens` are what `prepare()` materialises
    when the caller leaves them unset, marked as adapter defaults.

    * a key is required; without one every request fails with `MISSING_CREDENTIAL`
      before any I/O (the provider still constructs, so the app can start and say so);
    * reasoning effort is one of `off | low | high | max`: `off` becomes
      `thinking: {type: "disabled"}`, the others `thinking: {type: "enabled"}` plus
      `reasoning_effort`; anything else is `UNSUPPORTED_REASONING_EFFORT`;
    * with thinking on (DeepSeek's default) every assistant message carries
      `reasoning_content`, `""` when it had none;
    * V4 models have a 1,000,000-token context and the default output cap is 256,000.
    """

    name = "deepseek"
    label = "DeepSeek"

    def __init__(self, api_key: str | None, base_url: str = DEFAULT_BASE_URL, *,
                 connect_timeout: float = 10.0, read_timeout: float = 30.0,
                 write_timeout: float = 30.0, pool_timeout: float = 30.0,
                 idle_timeout: float | None = 300.0, client: httpx.AsyncClient | None = None,
                 first_byte_timeout: float | None = 25.0, silent_attempts: int = 3,
                 default_model: str = DEFAULT_MODEL, thinking: ThinkingMode | None = None,
                 default_effort: str = "high", max_tokens: int = DEFAULT_MAX_TOKENS,
                 context_windows: Mapping[str, int] | None = None, user_id: str | None = None,
                 retry_policy: Any = None, limits: StreamLimits | None = None) -> None:
        super().__init__(base_url, api_key, connect_timeout=connect_timeout,
                         read_timeout=read_timeout, write_timeout=write_timeout,
                         pool_timeout=pool_timeout, idle_timeout=idle_timeout, client=client,
                         first_byte_timeout=first_byte_timeout, silent_attempts=silent_attempts,
                         default_model=default_model,
                         context_windows={m: DEFAULT_CONTEXT_WINDOW for m in MODELS}
                         | dict(context_windows or {}),
                         retry_policy=retry_policy, limits=limits)
        if default_effort not in REASONING_EFFORTS:
            raise ValueError(f"default_effort must be one of {', '.join(REASONING_EFFORTS)}")
        self.thinking_mode = thinking
        self.default_effort = "off" if thinking == "disabled" else default_effort
        self.max_tokens = max_tokens
        self.user_id = user_id
        self.models = MODELS

    def context_window(self, model: str) -> int | None:
        # Upstream treats any model id as a 1M-context V4 deployment unless told otherwise.
        return self.context_windows.get(model, DEFAULT_CONTEXT_WINDOW)

    def prepare(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, bool]]:
        resolved, defaults = super().prepare(config)
        if resolved.get("reasoningEffort") is None:
            resolved["reasoningEffort"] = self.default_effort
            defaults["reasoningEffort"] = True
        if resolved.get("maxTokens") is None:
            resolved["maxTokens"] = self.max_tokens
            defaults["maxTokens"] = True
        return resolved, defaults

    def credential(self) -> str | None:
        key = super().credential()
        if key is None:
            raise LlmError(make_failure(
                f"no DeepSeek API key: set the {API_KEY_ENV} environment variable",
                "MISSING_CREDENTIAL"))
        return key

    def thinking(self, request: Mapping[str, Any]) -> Thinking:
        if request.get("purpose") == "session-title":  # titles never need thinking
            return Thinking({"thinking": {"type": "disabled"}}, ReasoningReplay())
        effort = request.get("reasoningEffort")
        if effort is not None and effort not in REASONING_EFFORTS:
            raise LlmError(make_failure(f'DeepSeek does not support reasoning effort "{effort}"',
                                        "UNSUPPORTED_REASONING_EFFORT"))
        if self.thinking_mode == "disabled" and effort not in (None, "off"):
            raise LlmError(make_failure(
                f'this DeepSeek deployment has thinking disabled; effort "{effort}" is unavailable',
                "UNSUPPORTED_REASONING_EFFORT"))
        fields: dict[str, Any]
        if effort == "off":
            fields = {"thinking": {"type": "disabled"}}
        elif effort is not None:
            fields = {"thinking": {"type": "enabled"}, "reasoning_effort": effort}
        else:
            fields = {} if self.thinking_mode is None else {"thinking": {"type": self.thinking_mode}}
        on = fields.get("thinking", {"type": "enabled"})["type"] == "enabled"
        return Thinking(fields, ReasoningReplay("reasoning_content", always=on))

    def headers(self, request: Mapping[str, Any], key: str | None) -> dict[str, str]:
        headers = super().headers(request, key)
        if self.user_id:
            headers["x-deepseek-harness-user-id"] = self.user_id
        if request.get("sessionId"):
            headers["x-deepseek-harness-session-id"] = str(request["sessionId"])
        if request.get("purpose") == "compaction":
            headers["x-deepseek-harness-compact"] = "1"
        return headers
