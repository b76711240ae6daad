"""toolfix for LiteLLM's proxy: a ``CustomLogger`` whose post-call hooks fix every chat
completion before the client sees it, streaming or not.

    # proxy config.yaml
    litellm_settings:
      callbacks: toolfix.hooks.litellm.proxy_handler

or in code: ``litellm.callbacks = [ToolfixCallback()]``.

For each choice, calls the model left in ``content`` or ``reasoning_content`` (Hermes
``<tool_call>``, Qwen, DeepSeek, Mistral, Llama and 35 more formats) move to
``tool_calls``; every call's arguments are repaired against the request's ``tools``; a
variant name gets the declared one; ``finish_reason`` becomes ``"tool_calls"``. A call that
cannot be repaired honestly is not passed on: its refusal (what the model should fix) is
added to the text, so the client's turn says why. The storm guard reads the request's
``messages``: a call repeated in a loop is stopped the same way.

A tool counts as one that may change things unless it is named in ``read_only``: such a
tool never gets a call the model's output cut off (``finish_reason: "length"``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection
from typing import Any

try:
    from litellm.integrations.custom_logger import CustomLogger
    from litellm.types.utils import ChatCompletionDeltaToolCall, ChatCompletionMessageToolCall, Function, ModelResponse
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("toolfix.hooks.litellm needs litellm: pip install 'toolfix[litellm]'") from e

from toolfix import FixedReply, ReplyStream, ToolSet
from toolfix.hooks._common import toolset_for


def _toolset(data: dict[str, Any], read_only: Collection[str]) -> ToolSet | None:
    defs = []
    for t in data.get("tools") or []:
        f = t.get("function", t) if isinstance(t, dict) else None
        if isinstance(f, dict) and f.get("name"):
            defs.append({"name": f["name"], "description": f.get("description") or "", "parameters": f.get("parameters") or {"type": "object"}})
    return toolset_for(defs, read_only) if defs else None


def _passed(c: Any, tools: ToolSet, sent: dict[str, Any]) -> bool:
    """A refused call to a tool whose schema toolfix cannot read: it goes on as sent."""
    return not c.ok and c.name in tools.broken and c.id in sent


def _calls(fixed: FixedReply, tools: ToolSet, sent: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for c in fixed.calls:
        if c.ok:
            calls.append({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}})
        elif _passed(c, tools, sent):
            calls.append(sent[c.id])
    return calls


def _said(fixed: FixedReply, tools: ToolSet, sent: dict[str, Any]) -> str:
    """The text of the turn: the prose left, then each refusal."""
    parts = [fixed.content] if fixed.content else []
    parts += [c.message for c in fixed.calls if not c.ok and c.message and not _passed(c, tools, sent)]
    return "\n\n".join(parts)


class ToolfixCallback(CustomLogger):
    """Fix tool calls in LiteLLM proxy responses (``async_post_call_success_hook``) and
    streams (``async_post_call_streaming_iterator_hook``)."""

    def __init__(self, *, tools: ToolSet | None = None, read_only: Collection[str] = ()) -> None:
        super().__init__()
        self.tools = tools
        self.read_only = tuple(read_only)

    def _tools_for(self, data: dict[str, Any]) -> ToolSet | None:
        return self.tools if self.tools is not None else _toolset(data, self.read_only)

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any) -> Any:
        if not isinstance(response, ModelResponse):
            return None
        tools = self._tools_for(data)
        if tools is None:
            return None
        history = data.get("messages")
        changed = False
        for choice in response.choices:
            message = choice.message
            native = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in (message.tool_calls or [])]
            content = message.content if isinstance(message.content, str) else ""
            reasoning = getattr(message, "reasoning_content", None)
            fixed = tools.fix_reply(content=content, reasoning_content=reasoning, tool_calls=native or None, finish_reason=choice.finish_reason, history=history)
            sent = {c.get("id"): c for c in native}
            refused = any(not c.ok and not _passed(c, tools, sent) for c in fixed.calls)
            if not fixed.changed_calls and not refused:
                continue
            changed = True
            calls = _calls(fixed, tools, sent)
            message.content = _said(fixed, tools, sent) or None
            message.tool_calls = [
                ChatCompletionMessageToolCall(id=c["id"], type="function", function=Function(**c["function"])) for c in calls
            ] or None
            if fixed.reasoning_content is not None and hasattr(message, "reasoning_content"):
                message.reasoning_content = fixed.reasoning_content
            choice.finish_reason = "tool_calls" if calls else "stop"
        return response if changed else None

    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict: Any, response: Any, request_data: dict) -> AsyncGenerator[Any, None]:
        tools = self._tools_for(request_data)
        if tools is None:
            async for chunk in response:
                yield chunk
            return
        stream = ReplyStream(tools, request_data.get("messages"))
        last = None
        finish = None
        ids: set[str] = set()  # the ids the server streamed (a call toolfix passes on keeps its own)
        async for chunk in response:
            last = chunk
            choice = chunk.choices[0] if chunk.choices else None
            if choice is None:
                yield chunk
                continue
            delta = choice.delta
            events = []
            if getattr(delta, "reasoning_content", None):
                events += stream.push_reasoning(delta.reasoning_content)
            if delta.content:
                events += stream.push_content(delta.content)
            for tc in delta.tool_calls or []:
                f = tc.function
                name, arguments = getattr(f, "name", None), getattr(f, "arguments", None)
                events += stream.push_tool_call(tc.index or 0, id=tc.id, name=name, arguments=arguments)
                if tc.id:
                    ids.add(tc.id)
            if choice.finish_reason:
                finish = choice.finish_reason
                continue
            out = _chunk(chunk, events)
            if out is not None:
                yield out
        if last is None:
            return
        events, fixed = stream.finish(finish)
        # The server's calls as streamed: what a call toolfix passes on carries.
        sent = {
            c.id: {"id": c.id, "type": "function", "function": {"name": c.written_name, "arguments": c.written_arguments}}
            for c in fixed.calls
            if c.channel == "tool_calls" and c.id in ids
        }
        refusals = [c.message for c in fixed.calls if not c.ok and c.message and not _passed(c, tools, sent)]
        calls = _calls(fixed, tools, sent)
        tail = _chunk(last, events, extra_text="\n\n".join(refusals), calls=calls, finish="tool_calls" if calls else (finish or "stop"))
        if tail is not None:
            yield tail


def _chunk(template: Any, events: list[Any], *, extra_text: str = "", calls: list[dict[str, Any]] | None = None, finish: str | None = None) -> Any:
    """A chunk like `template` carrying the text the events release (and, at the end, the
    fixed calls and the finish reason); `None` when it would carry nothing."""
    text = "".join(e.text for e in events if e.kind == "content")
    reasoning = "".join(e.text for e in events if e.kind == "reasoning")
    if extra_text:
        text = (text + "\n\n" + extra_text) if text else extra_text
    if not text and not reasoning and not calls and finish is None:
        return None
    chunk = template.model_copy(deep=True)
    choice = chunk.choices[0]
    delta = choice.delta
    delta.content = text or None
    if hasattr(delta, "reasoning_content"):
        delta.reasoning_content = reasoning or None
    delta.tool_calls = None
    if calls:
        delta.tool_calls = [
            ChatCompletionDeltaToolCall(index=i, id=c["id"], type="function", function=Function(name=c["function"]["name"], arguments=c["function"]["arguments"]))
            for i, c in enumerate(calls)
        ]
    choice.finish_reason = finish
    return chunk


proxy_handler = ToolfixCallback()
"""An instance for the proxy's ``callbacks`` setting."""
