"""The concrete agent loop: LoopAgent (turn/step driver), its factory, tools and prompt."""

from .agent import LoopAgent
from .builtin_tools import builtin_tools
from .prompt import Assembly, SystemPrompt
from .router import LlmRouter
from .runtime import LoopFactory, LoopRuntime
from .tools import Tool, ToolCall, ToolOutput, ToolRegistry, tool

__all__ = ["Assembly", "LlmRouter", "LoopAgent", "LoopFactory", "LoopRuntime", "SystemPrompt",
           "Tool", "ToolCall", "ToolOutput", "ToolRegistry", "builtin_tools", "tool"]
