"""toolfix for pydantic-ai: a capability that repairs every tool call before pydantic-ai
validates it, and recovers calls the model left in its text.

    from pydantic_ai import Agent
    from toolfix.hooks.pydantic_ai import ToolfixCapability

    agent = Agent(model, tools=[get_weather], capabilities=[ToolfixCapability()])

- ``before_tool_validate``: the call's arguments (a JSON string, or a dict from providers
  that parse them) are repaired against the tool's JSON Schema; a repaired call runs with
  the repaired arguments (and the call in the history is updated to them), a call that
  cannot be repaired honestly becomes ``ModelRetry(message)``: the model is told what to fix.
- ``after_model_request``: calls found in ``TextPart``s (Hermes ``<tool_call>``, Qwen,
  DeepSeek, Mistral, Llama and 35 more formats) move into ``ToolCallPart``s, and so do
  calls left in ``ThinkingPart``s when the response has no other call; a call named by a
  variant of a tool's name (``GetWeather``) gets the declared name.

A tool counts as one that may change things unless it is named in ``read_only``: such a
tool never runs on a call the model's output cut off.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

try:
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import ModelRetry
    from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("toolfix.hooks.pydantic_ai needs pydantic-ai: pip install 'toolfix[pydantic-ai]'") from e

from toolfix import ToolSet
from toolfix.hooks._common import arguments_text, toolset_for


def _definition(tool_def: Any) -> dict[str, Any]:
    return {
        "name": tool_def.name,
        "description": tool_def.description or "",
        "parameters": tool_def.parameters_json_schema,
    }


@dataclass
class ToolfixCapability(AbstractCapability[Any]):
    """Repair tool calls and recover calls from text, for ``Agent(capabilities=[...])``.

    ``tools``: a ToolSet to repair against (default: built from the agent's own tool
    definitions); ``read_only``: names of tools without side effects.
    """

    tools: ToolSet | None = None
    read_only: Collection[str] = field(default_factory=tuple)

    def _toolset(self, definitions: list[Any]) -> ToolSet:
        if self.tools is not None:
            return self.tools
        return toolset_for([_definition(d) for d in definitions], self.read_only)

    async def before_tool_validate(self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any) -> Any:
        tools = self._toolset([tool_def])
        if tool_def.name in tools.broken:
            return args  # a schema toolfix cannot read: pydantic-ai validates as usual
        outcome = tools.repair_call(tool_def.name, arguments_text(args), hit_token_limit=_cut(ctx, call))
        if not outcome.ok:
            raise ModelRetry(outcome.message or "the call was refused")
        if outcome.outcome == "repaired" and isinstance(args, str):
            # The history keeps what ran, so the next request sends valid JSON back.
            call.args = outcome.arguments_json
            if call.id is not None:
                call.provider_details = {**(call.provider_details or {}), "toolfix_original_id": call.id}
                call.id = None
        return outcome.arguments

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: ModelResponse) -> ModelResponse:
        definitions = list(request_context.model_request_parameters.function_tools)
        if not definitions and self.tools is None:
            return response
        tools = self._toolset(definitions)
        names = set(tools.names)
        # The calls the model made natively, so that a copy of one written in the text is
        # recognised as the same call (the native one and its id win) and never runs twice.
        native = [
            {"id": p.tool_call_id, "type": "function", "function": {"name": p.tool_name, "arguments": arguments_text(p.args)}}
            for p in response.parts
            if isinstance(p, ToolCallPart)
        ]
        parts: list[Any] = []
        changed = False
        for part in response.parts:
            if isinstance(part, ToolCallPart) and part.tool_name not in names:
                # A variant of a declared name (GetWeather for get_weather): the declared one.
                resolved = tools.repair_call(part.tool_name, arguments_text(part.args)).name
                if resolved in names:
                    part.tool_name = resolved
                    changed = True
                parts.append(part)
            elif isinstance(part, TextPart) and part.content:
                fixed = tools.fix_reply(content=part.content, tool_calls=native or None, finish_reason=response.finish_reason)
                # The native calls are repaired in before_tool_validate; here only those
                # found in the text count.
                found = [c for c in fixed.calls if c.channel != "tool_calls"]
                unchanged = not found and fixed.content == part.content
                if unchanged or any(c.name in tools.broken for c in found):
                    parts.append(part)
                    continue
                changed = True
                refused = [c for c in found if not c.ok]
                if refused:
                    raise ModelRetry("\n".join(c.message or "" for c in refused))
                if fixed.content.strip():
                    parts.append(TextPart(fixed.content))
                for c in found:
                    parts.append(ToolCallPart(tool_name=c.name, args=c.arguments_json, tool_call_id=c.id))
            else:
                parts.append(part)
        thinking = "\n\n".join(p.content for p in response.parts if isinstance(p, ThinkingPart) and p.content)
        if thinking and not any(isinstance(p, ToolCallPart) for p in parts):
            # A call the model wrote only in its reasoning (a thinking model that never
            # closed its think block): recovered as the library does for reasoning_content.
            # The thinking itself stays as the model wrote it.
            fixed = tools.fix_reply(reasoning_content=thinking, finish_reason=response.finish_reason)
            found = [c for c in fixed.calls if c.channel == "reasoning"]
            if found and not any(c.name in tools.broken for c in found):
                refused = [c for c in found if not c.ok]
                if refused:
                    raise ModelRetry("\n".join(c.message or "" for c in refused))
                parts += [ToolCallPart(tool_name=c.name, args=c.arguments_json, tool_call_id=c.id) for c in found]
                changed = True
        if changed:
            response.parts = parts
        return response


def _cut(ctx: Any, call: ToolCallPart) -> bool:
    """True when `call` is the last part of a response that stopped at the token limit."""
    for message in reversed(getattr(ctx, "messages", None) or []):
        if isinstance(message, ModelResponse) and any(p is call for p in message.parts):
            return message.finish_reason == "length" and message.parts[-1] is call
    return False
