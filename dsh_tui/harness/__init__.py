"""The `ctx.agents` world: context and events, sessions, inbox, registry, model vocabulary.

Nothing here imports Textual or a model adapter: the UI and the adapters both
build on this package, never the other way round.
"""

from .agent import (
    Agent,
    AgentFactory,
    AgentHandle,
    AgentOptions,
    AgentStatus,
    CreateAgentOptions,
    ResumeAgentOptions,
)
from .assembler import BlockAssembler
from .context import Context, InactiveContextError
from .events import AgentEvents, EventBus, agent_events
from .fold import fold_consumed_work
from .inbox import Inbox, InboxError, InboxTarget
from .jsonvalue import NotJsonError, dumps_compact, snapshot_json
from .llm_types import (
    HarnessError,
    LlmError,
    LlmFailure,
    LlmProvider,
    LlmRequest,
    StreamChunk,
    TokenUsage,
    error_chain,
    failure_of,
    is_token_delta,
    make_failure,
)
from .messages import UserMessage, message_text, user_message
from .registry import AgentRegistry, Agents, RegistryError
from .session import Session, SessionError, SessionEvent
from .signal import Cancelled, CancelSignal
from .store import SessionStore
from .surface import AgentsSurface, ContextSurface, InboxSurface, SessionSurface

__all__ = [
    "Agent", "AgentEvents", "AgentFactory", "AgentHandle", "AgentOptions", "AgentRegistry",
    "AgentStatus", "Agents", "AgentsSurface", "BlockAssembler", "CancelSignal", "Cancelled",
    "Context", "ContextSurface", "CreateAgentOptions", "EventBus", "HarnessError",
    "InactiveContextError", "Inbox", "InboxError", "InboxSurface", "InboxTarget", "LlmError",
    "LlmFailure", "LlmProvider", "LlmRequest", "NotJsonError", "RegistryError",
    "ResumeAgentOptions", "Session", "SessionError", "SessionEvent", "SessionStore",
    "SessionSurface", "StreamChunk", "TokenUsage", "UserMessage", "agent_events", "dumps_compact",
    "error_chain", "failure_of", "fold_consumed_work", "is_token_delta", "make_failure",
    "message_text", "snapshot_json", "user_message",
]


def new_world(*, read_only: bool = False) -> Context:
    """A fresh root context with its own bus, registry and session store."""
    bus = EventBus()
    return Context(bus=bus, registry=AgentRegistry(bus), sessions=SessionStore(bus),
                   read_only=read_only)
