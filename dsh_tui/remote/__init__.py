"""`ctx.agents` over a running dsh runtime's web API (`dsh --profile web`).

`attach(parse_endpoint(line))` gives a `RemoteWorld` whose `ctx` is an ordinary harness
context: the runtime's sessions are its agents, their logs the runtime's durable events,
live replies `agent/assistant-stream` frames. What the runtime's API cannot do is
refused with a reason (`agent.capabilities`). Imports `dsh_tui.harness` only.
"""

from .agent import ASSISTANT_STREAM, RemoteAgent
from .endpoint import TOKEN_ENV, Endpoint, EndpointError, Token, parse_endpoint
from .inbox import RemoteInbox, UnavailableError
from .session import RefusedError, RemoteSession
from .wire import RemoteError
from .world import REMOTE_SERVICE, RemoteWorld, attach

__all__ = [
    "ASSISTANT_STREAM", "REMOTE_SERVICE", "TOKEN_ENV", "Endpoint", "EndpointError",
    "RefusedError", "RemoteAgent", "RemoteError", "RemoteInbox", "RemoteSession",
    "RemoteWorld", "Token", "UnavailableError", "attach", "parse_endpoint",
]
