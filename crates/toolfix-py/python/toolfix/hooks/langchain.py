"""toolfix for LangChain: a function that fixes an ``AIMessage``, and a middleware for
``create_agent`` that fixes every model reply.

    from langchain.agents import create_agent
    from toolfix.hooks.langchain import ToolfixMiddleware

    agent = create_agent(model, tools=[get_weather], middleware=[ToolfixMiddleware()])

``fix_ai_message(message, tools)``: the calls LangChain parked in ``invalid_tool_calls``
(arguments that were not valid JSON) and the calls it could parse are repaired against
their tool's schema; calls the model left in ``content`` (Hermes ``<tool_call>``, Qwen,
DeepSeek, Mistral, Llama and 35 more formats; a string or the text blocks of a list) are
recovered, and so are calls left in ``thinking`` blocks when no other channel has one; a name written as a variant
(``GetWeather``) gets the declared one. Usable calls go to ``tool_calls``; a call that
cannot be repaired honestly stays in ``invalid_tool_calls`` with toolfix's refusal as its
``error``.

``ToolfixMiddleware`` does this in ``wrap_model_call`` (sync and async) and, when a call
was refused, asks the model again with the refusal (up to ``max_reprompts`` times) before
handing the reply on.

A tool counts as one that may change things unless it is named in ``read_only``: such a
tool never runs on a call the model's output cut off.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, ModelResponse
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.messages.tool import invalid_tool_call, tool_call
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("toolfix.hooks.langchain needs langchain: pip install 'toolfix[langchain]'") from e

from toolfix import FixedReply, ToolSet
from toolfix.hooks._common import toolset_for


def toolset_of(tools: Sequence[Any], read_only: Collection[str] = ()) -> ToolSet:
    """A ToolSet for LangChain tools (``BaseTool``, functions, OpenAI dicts), cached."""
    defs = []
    for t in tools:
        try:
            spec = convert_to_openai_tool(t)
        except (TypeError, ValueError):
            continue  # not a function tool (a provider's built-in tool): nothing to repair
        f = spec.get("function", spec)
        if isinstance(f, dict) and f.get("name"):
            defs.append({"name": f["name"], "description": f.get("description", ""), "parameters": f.get("parameters") or {"type": "object"}})
    return toolset_for(defs, read_only)


_TEXT_BLOCKS = ("text", "output_text")
_REASONING_BLOCKS = ("thinking", "reasoning")
_CUT_BY_LIMIT = ("max_tokens", "MAX_TOKENS")


def _block_text(block: Any) -> str | None:
    """The prose of one content block (a string, or a ``text`` block), else None."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") in _TEXT_BLOCKS and isinstance(block.get("text"), str):
        return block["text"]
    return None


def _text(content: Any) -> str | None:
    """The prose of ``content``: the string, or the text blocks of a list (as Anthropic,
    Gemini and the Responses API give it) joined by blank lines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [t for t in map(_block_text, content) if t is not None]
        return "\n\n".join(texts) if texts else None
    return None


def _reasoning(message: AIMessage) -> str | None:
    """The reasoning a model wrote before answering: ``thinking``/``reasoning`` blocks of a
    list content, or ``additional_kwargs["reasoning_content"]`` (DeepSeek, vLLM, Ollama)."""
    parts: list[str] = []
    if isinstance(message.content, list):
        for block in message.content:
            if not isinstance(block, dict) or block.get("type") not in _REASONING_BLOCKS:
                continue
            text = block.get("thinking", block.get("reasoning"))
            if isinstance(text, str):
                parts.append(text)
            for part in block.get("summary") or ():
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    parts.append(part["text"])
    extra = (message.additional_kwargs or {}).get("reasoning_content")
    if isinstance(extra, str):
        parts.append(extra)
    return "\n\n".join(parts) if parts else None


def _with_text(content: Any, before: str, after: str) -> Any:
    """``content`` with its prose replaced by ``after`` (what is left once calls were moved
    out of it). Unchanged prose keeps the content as it was; in a list, the text blocks
    become one (at the first one's place) and every other block stays where it was."""
    if after == before:
        return content
    if isinstance(content, str):
        return after
    out: list[Any] = []
    placed = False
    for block in content:
        if _block_text(block) is None:
            out.append(block)
        elif not placed:
            placed = True
            if after:
                out.append({**block, "text": after} if isinstance(block, dict) else after)
    return out


def _fix(message: AIMessage, tools: ToolSet) -> tuple[AIMessage, FixedReply]:
    native = []
    invalid: set[str] = set()
    sent: dict[str, Any] = {}
    for c in message.tool_calls:
        native.append({"id": c.get("id"), "function": {"name": c["name"], "arguments": json.dumps(c.get("args") or {})}})
        sent[c.get("id") or ""] = c
    for c in message.invalid_tool_calls:
        native.append({"id": c.get("id"), "function": {"name": c.get("name") or "", "arguments": c.get("args") or ""}})
        invalid.add(c.get("id") or "")
        sent[c.get("id") or ""] = c
    content = _text(message.content)
    metadata = message.response_metadata or {}
    finish = metadata.get("finish_reason") or metadata.get("stop_reason")
    if finish in _CUT_BY_LIMIT:
        finish = "length"  # the token limit, as Anthropic and Gemini say it
    fixed = tools.fix_reply(content=content or "", reasoning_content=_reasoning(message), tool_calls=native or None, finish_reason=finish)
    good, bad = [], []
    for c in fixed.calls:
        if c.ok:
            good.append(tool_call(name=c.name, args=c.arguments or {}, id=c.id))
        elif c.name in tools.broken and c.id in sent:
            # A tool whose schema toolfix cannot read: the call stays as LangChain had it.
            (bad if c.id in invalid else good).append(sent[c.id])
        else:
            bad.append(invalid_tool_call(name=c.name, args=c.written_arguments, id=c.id, error=c.message))
    update: dict[str, Any] = {"tool_calls": good, "invalid_tool_calls": bad}
    if content is not None:
        update["content"] = _with_text(message.content, content, fixed.content)
    return message.model_copy(update=update), fixed


def fix_ai_message(message: AIMessage, tools: ToolSet | Sequence[Any], *, read_only: Collection[str] = ()) -> AIMessage:
    """``message`` with its calls fixed: repairable ``invalid_tool_calls`` and calls found in
    ``content`` moved to ``tool_calls`` (repaired), refused calls in ``invalid_tool_calls``
    with toolfix's refusal as ``error``. ``tools``: a ToolSet or the LangChain tools."""
    toolset = tools if isinstance(tools, ToolSet) else toolset_of(tools, read_only)
    return _fix(message, toolset)[0]


class ToolfixMiddleware(AgentMiddleware):
    """Fix every model reply of a ``create_agent`` agent, re-asking the model with the
    refusal when a call cannot be used."""

    def __init__(self, *, tools: ToolSet | None = None, read_only: Collection[str] = (), max_reprompts: int = 1) -> None:
        super().__init__()
        self._tools = tools
        self._read_only = tuple(read_only)
        self._max_reprompts = max(0, max_reprompts)

    def _toolset(self, request: Any) -> ToolSet | None:
        if self._tools is not None:
            return self._tools
        tools = list(getattr(request, "tools", None) or [])
        toolset = toolset_of(tools, self._read_only) if tools else None
        return toolset if toolset is not None and len(toolset) else None

    def _step(self, response: Any, tools: ToolSet) -> tuple[Any, list[Any]]:
        """The response with its AI message fixed, and the messages of a re-prompt (empty
        when every call can run)."""
        messages = list(response.result)
        for i, m in enumerate(messages):
            if isinstance(m, AIMessage):
                fixed_message, fixed = _fix(m, tools)
                messages[i] = fixed_message
                refused = [c for c in fixed.calls if not c.ok and c.name not in tools.broken]
                again: list[Any] = []
                if refused:
                    shown = _text(fixed_message.content) or ""
                    if shown.strip():
                        again.append(AIMessage(content=shown))
                    again += [HumanMessage(content=c.message or "") for c in refused]
                return ModelResponse(result=messages, structured_response=response.structured_response), again
        return response, []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        tools = self._toolset(request)
        response = handler(request)
        if tools is None:
            return response
        for attempt in range(self._max_reprompts + 1):
            fixed, again = self._step(response, tools)
            if not again or attempt == self._max_reprompts:
                return fixed
            request = request.override(messages=[*request.messages, *again])
            response = handler(request)
        return fixed

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        tools = self._toolset(request)
        response = await handler(request)
        if tools is None:
            return response
        for attempt in range(self._max_reprompts + 1):
            fixed, again = self._step(response, tools)
            if not again or attempt == self._max_reprompts:
                return fixed
            request = request.override(messages=[*request.messages, *again])
            response = await handler(request)
        return fixed
