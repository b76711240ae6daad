"""toolfix for the OpenAI Agents SDK: a model wrapper that fixes every reply before the
runner acts on it, and a tool wrapper that repairs the JSON a tool is invoked with.

    from agents import Agent
    from toolfix.hooks.openai_agents import ToolfixModel

    agent = Agent(name="a", tools=[get_weather], model=ToolfixModel(OpenAIChatCompletionsModel(...)))

``ToolfixModel`` wraps any ``Model`` (Chat Completions, Responses, LiteLLM, your own): in
``get_response`` and ``stream_response`` each ``function_call`` item is repaired against its
tool's JSON Schema (``"42"`` → 42, single quotes, a fence, a cut-off closer), a tool name
written as a variant (``GetWeather``) gets the declared name, and calls the model left in
its text (Hermes ``<tool_call>``, Qwen, DeepSeek, Mistral, Llama and 35 more formats)
become ``function_call`` items with fresh call ids. The SDK aborts a run on invalid JSON
or an unknown tool name; here a call that cannot be repaired honestly is sent back to the
model with toolfix's refusal (as the call's output, or as a user message for a call made
in text) and the model asked again, up to ``max_reprompts`` times; a call still refused
after that is dropped, and a reply left with nothing carries the refusal as its text.
Streaming passes text deltas on as they come with call markup held back until it is
decided, and fixes the completed response the runner acts on; a refused call is sent back
to the model the same way, and of the new attempt's stream the client gets only what it
has not seen (its text when none went out before, and the completed response; the usage
counts every attempt).

``repairing_tool(tool)`` returns the ``FunctionTool`` with its invocation repairing the
arguments first; a refusal becomes the tool's output, which the model reads.

A tool counts as one that may change things unless it is named in ``read_only``: such a
tool never runs on a call the model's output cut off. The Agents SDK makes every
parameter required in a strict schema; toolfix reads a parameter that has a default as
optional, as the tool's own validation does.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import AsyncIterator, Collection
from typing import Any

try:
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.tool import FunctionTool
    from openai.types.responses import (
        ResponseCompletedEvent,
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseTextDeltaEvent,
        ResponseTextDoneEvent,
    )
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("toolfix.hooks.openai_agents needs openai-agents: pip install 'toolfix[openai-agents]'") from e

from toolfix import FixedReply, ReplyStream, ToolSet
from toolfix.hooks._common import toolset_for


def relaxed(schema: Any) -> Any:
    """`schema` with every property that has a `default` optional again (the Agents SDK's
    strict schemas list every property as required)."""
    if isinstance(schema, list):
        return [relaxed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: relaxed(v) for k, v in schema.items()}
    props = out.get("properties")
    if isinstance(props, dict) and isinstance(out.get("required"), list):
        out["required"] = [k for k in out["required"] if not (isinstance(props.get(k), dict) and "default" in props[k])]
    return out


def _definitions(tools: list[Any], handoffs: list[Any]) -> list[dict[str, Any]]:
    defs = []
    for t in tools:
        if isinstance(t, FunctionTool):
            defs.append({"name": t.name, "description": t.description or "", "parameters": relaxed(t.params_json_schema)})
    for h in handoffs:
        name = getattr(h, "tool_name", None)
        if name:
            defs.append({"name": name, "description": getattr(h, "tool_description", "") or "", "parameters": relaxed(getattr(h, "input_json_schema", None) or {"type": "object"})})
    return defs


def repairing_tool(tool: FunctionTool, *, read_only: bool = False) -> FunctionTool:
    """`tool` whose invocation repairs its JSON arguments before the tool parses them; a
    call that cannot be repaired honestly returns toolfix's refusal as the tool's output."""
    definition = {"name": tool.name, "description": tool.description or "", "parameters": relaxed(tool.params_json_schema)}
    tools = toolset_for([definition], [tool.name] if read_only else [])
    invoke = tool.on_invoke_tool

    async def on_invoke_tool(ctx: Any, input: str) -> Any:
        outcome = tools.repair_call(tool.name, input)
        if not outcome.ok:
            return outcome.message
        return await invoke(ctx, outcome.arguments_json)

    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def _sum_usage(usages: list[Any]) -> Any:
    """The usage of every attempt of one turn added up (the last one's shape), so a
    re-prompt's tokens are counted."""
    present = [u for u in usages if u is not None]
    if len(present) < 2:
        return usages[-1] if usages else None
    total = present[-1]
    fields = {k: sum(getattr(u, k, 0) or 0 for u in present) for k in ("input_tokens", "output_tokens", "total_tokens")}
    return total.model_copy(update=fields)


def _text_of(item: Any) -> str:
    return "".join(part.text for part in getattr(item, "content", []) if getattr(part, "type", None) == "output_text")


class _Fixed:
    """A model response's output, fixed: the output items to keep, and the refusals."""

    def __init__(self, output: list[Any], tools: ToolSet, history: list[Any] | None) -> None:
        messages = [i for i in output if getattr(i, "type", None) == "message"]
        calls = [i for i in output if getattr(i, "type", None) == "function_call"]
        content = "".join(_text_of(m) for m in messages)
        native = [{"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
        fixed: FixedReply = tools.fix_reply(content=content, tool_calls=native or None, history=history)
        by_id = {c.call_id: c for c in calls}
        self.fixed = fixed
        self.changed = fixed.changed_calls or (bool(messages) and fixed.content != content)
        self.original = {c.id: by_id[c.id] for c in fixed.calls if c.channel == "tool_calls" and c.id in by_id}
        # A call to a tool whose schema toolfix cannot read stays as the model sent it.
        passed = {c.id for c in fixed.calls if not c.ok and c.name in tools.broken}
        self.refused = [c for c in fixed.calls if not c.ok and c.id not in passed]
        others = [i for i in output if getattr(i, "type", None) not in ("message", "function_call")]
        kept: list[Any] = list(others)
        if messages and fixed.content.strip():
            first = messages[0]
            kept.append(first.model_copy(update={"content": [ResponseOutputText(type="output_text", text=fixed.content, annotations=[])]}))
        for c in fixed.calls:
            if c.id in passed and c.id in self.original:
                kept.append(self.original[c.id])
                continue
            if not c.ok:
                continue
            item = self.original.get(c.id)
            if item is not None:
                kept.append(item.model_copy(update={"name": c.name, "arguments": c.arguments_json}))
            else:
                kept.append(ResponseFunctionToolCall(type="function_call", call_id=c.id, name=c.name, arguments=c.arguments_json or "{}", status="completed"))
        if not any(getattr(i, "type", None) in ("message", "function_call") for i in kept) and self.refused:
            # Nothing left to act on: the reply says why, never empty.
            text = "\n".join(c.message or "" for c in self.refused)
            kept.append(ResponseOutputMessage(id="msg_toolfix", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text=text, annotations=[])]))
        self.output = kept

    def reprompt(self, output: list[Any]) -> list[dict[str, Any]]:
        """Input items that give the model its refused calls back with toolfix's refusal:
        its text as it was, each refused `function_call` with the refusal as its output, a
        refused call made in text with the refusal as a user message."""
        items: list[dict[str, Any]] = []
        for i in output:
            if getattr(i, "type", None) == "message":
                items.append(i.model_dump(exclude_unset=True))
        for c in self.refused:
            original = self.original.get(c.id)
            if original is not None:
                items.append(original.model_dump(exclude_unset=True))
                items.append({"type": "function_call_output", "call_id": original.call_id, "output": c.message or ""})
            else:
                items.append({"role": "user", "content": c.message or ""})
        return items


class ToolfixModel(Model):
    """An Agents SDK ``Model`` that fixes the replies of ``model``: repaired arguments,
    declared names, calls recovered from text, refusals sent back to the model."""

    def __init__(self, model: Model, *, tools: ToolSet | None = None, read_only: Collection[str] = (), max_reprompts: int = 1) -> None:
        self.model = model
        self.tools = tools
        self.read_only = tuple(read_only)
        self.max_reprompts = max(0, max_reprompts)

    def _toolset(self, tools: list[Any], handoffs: list[Any]) -> ToolSet | None:
        if self.tools is not None:
            return self.tools
        defs = _definitions(tools, handoffs)
        return toolset_for(defs, self.read_only) if defs else None

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, *, previous_response_id=None, conversation_id=None, prompt=None) -> ModelResponse:  # noqa: A002
        toolset = self._toolset(tools, handoffs)
        kwargs = dict(previous_response_id=previous_response_id, conversation_id=conversation_id, prompt=prompt)
        response = await self.model.get_response(system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs)
        if toolset is None:
            return response
        history = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        for attempt in range(self.max_reprompts + 1):
            fixed = _Fixed(list(response.output), toolset, history)
            if not fixed.refused or attempt == self.max_reprompts:
                break
            history = history + fixed.reprompt(list(response.output))
            response = await self.model.get_response(system_instructions, history, model_settings, tools, output_schema, handoffs, tracing, **kwargs)
        if fixed.changed or fixed.refused:
            response.output = fixed.output
        return response

    async def stream_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, *, previous_response_id=None, conversation_id=None, prompt=None) -> AsyncIterator[Any]:  # noqa: A002
        toolset = self._toolset(tools, handoffs)
        kwargs = dict(previous_response_id=previous_response_id, conversation_id=conversation_id, prompt=prompt)
        if toolset is None:
            async for event in self.model.stream_response(system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs):
                yield event
            return
        history = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        request: Any = input
        shown_before = False  # text of an earlier attempt reached the client
        spent: list[Any] = []  # the usage of attempts that were asked again
        for attempt in range(self.max_reprompts + 1):
            # Text goes out as it comes, with call markup held back (toolfix's ReplyStream)
            # until it is decided; the completed response the runner acts on is fixed whole.
            # When a call is refused and attempts remain, the model is asked again with the
            # refusal, and of that attempt's stream the client gets only what it has not
            # seen: its text when none went out before, and the completed response.
            retry = attempt > 0
            text: ReplyStream | None = ReplyStream(toolset, history)
            shown_now = False
            again: list[dict[str, Any]] | None = None
            stream = self.model.stream_response(system_instructions, request, model_settings, tools, output_schema, handoffs, tracing, **kwargs)
            try:
                async for event in stream:
                    if isinstance(event, ResponseTextDeltaEvent):
                        shown = "".join(e.text or "" for e in text.push_content(event.delta) if e.kind == "content") if text else event.delta
                        if shown and not (retry and shown_before):
                            shown_now = True
                            yield event.model_copy(update={"delta": shown})
                        continue
                    if isinstance(event, ResponseTextDoneEvent) and text is not None:
                        last, fixed = text.finish()
                        text = None
                        shown = "".join(e.text or "" for e in last if e.kind == "content")
                        if shown and not (retry and shown_before):
                            shown_now = True
                            yield ResponseTextDeltaEvent(**{**event.model_dump(exclude={"text", "type"}), "type": "response.output_text.delta", "delta": shown, "logprobs": []})
                        event = event.model_copy(update={"text": fixed.content})
                    if isinstance(event, ResponseCompletedEvent):
                        output = list(event.response.output)
                        fixed_output = _Fixed(output, toolset, history)
                        if fixed_output.refused and attempt < self.max_reprompts:
                            again = fixed_output.reprompt(output)
                            spent.append(event.response.usage)
                            break
                        response = copy.copy(event.response)
                        if fixed_output.changed or fixed_output.refused:
                            response.output = fixed_output.output
                        response.usage = _sum_usage([*spent, response.usage])
                        yield event.model_copy(update={"response": response})
                        continue
                    if not retry:
                        yield event
            finally:
                closing = getattr(stream, "aclose", None)
                if closing is not None:
                    await closing()
            shown_before = shown_before or shown_now
            if again is None:
                return
            history = history + again
            request = history

    async def close(self) -> None:
        await self.model.close()

    def get_retry_advice(self, request: Any) -> Any:
        return self.model.get_retry_advice(request)
