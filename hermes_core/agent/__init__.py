"""The reference agent loop (``hermes-memory chat``): prompt assembly, the tool loop, slash
commands.

Any other framework can drive the same lifecycle through the Session API directly; see
docs/library-use.md.
"""

from .loop import Agent, AgentEvent, LLMNotConfiguredError, TurnResult

__all__ = ["Agent", "AgentEvent", "LLMNotConfiguredError", "TurnResult"]
