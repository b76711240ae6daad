"""The LangChain hooks against the real langchain, with a fake chat model that sends
broken calls (as langchain_openai parks them: unparsable arguments in
`invalid_tool_calls`): the tool runs with the repaired arguments, or the model gets the
refusal."""

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from toolfix.hooks.langchain import ToolfixMiddleware, fix_ai_message


class ScriptedChatModel(BaseChatModel):
    """Answers with `replies` in turn; records the messages it was sent."""

    replies: list[AIMessage]
    seen: list[list[Any]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.replies[len(self.seen) - 1]
        return ChatResult(generations=[ChatGeneration(message=reply)])


def bad(name, args, id="c1"):
    return {"name": name, "args": args, "id": id, "error": "Function arguments are not valid JSON", "type": "invalid_tool_call"}


def make_tools(ran):
    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """Weather forecast for a city."""
        ran.append(("get_weather", city, days))
        return f"sunny in {city}"

    @tool
    def transfer(account: str, amount: float) -> str:
        """Move money."""
        ran.append(("transfer", account, amount))
        return "done"

    return [get_weather, transfer]


def run(replies, ran, middleware=True):
    model = ScriptedChatModel(replies=replies, seen=[])
    agent = create_agent(model, tools=make_tools(ran), middleware=[ToolfixMiddleware()] if middleware else [])
    result = agent.invoke({"messages": [HumanMessage("go")]})
    return result, model


def test_without_toolfix_an_invalid_call_never_runs():
    ran = []
    run([AIMessage(content="", invalid_tool_calls=[bad("get_weather", "{'city': 'Paris',}")]), AIMessage(content="?")], ran, middleware=False)
    assert ran == []


def test_invalid_tool_calls_are_repaired_and_run():
    ran = []
    result, _ = run([
        AIMessage(content="", invalid_tool_calls=[bad("get_weather", "```json\n{'city': 'Paris', 'days': '3',}\n```")]),
        AIMessage(content="Sunny."),
    ], ran)
    assert ran == [("get_weather", "Paris", 3)]
    assert result["messages"][-1].content == "Sunny."


def test_a_call_in_the_content_runs():
    ran = []
    leak = 'On it.<tool_call>{"name": "GetWeather", "arguments": {"city": "Oslo"}}</tool_call>'
    result, _ = run([AIMessage(content=leak), AIMessage(content="Cold.")], ran)
    assert ran == [("get_weather", "Oslo", 1)]
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.content == "On it." and ai.tool_calls[0]["name"] == "get_weather"


def test_a_refused_call_goes_back_to_the_model():
    ran = []
    result, model = run([
        AIMessage(content="", invalid_tool_calls=[bad("transfer", '{"account": "A-7", "amount": 50')], response_metadata={"finish_reason": "length"}),
        AIMessage(content="", tool_calls=[{"name": "transfer", "args": {"account": "A-7", "amount": 500}, "id": "c2"}]),
        AIMessage(content="Sent."),
    ], ran)
    assert ran == [("transfer", "A-7", 500)]
    told = [m.content for m in model.seen[1] if isinstance(m, HumanMessage)]
    assert any("cut off" in t for t in told)


def test_fix_ai_message_keeps_refusals_in_invalid_tool_calls():
    tools = make_tools([])
    message = AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Rome", "days": "2"}, "id": "a"}],
                        invalid_tool_calls=[bad("transfer", '{"account": "B", "amount": 1, "amount": 2}', "b")])
    fixed = fix_ai_message(message, tools)
    assert fixed.tool_calls == [{"name": "get_weather", "args": {"city": "Rome", "days": 2}, "id": "a", "type": "tool_call"}]
    (refused,) = fixed.invalid_tool_calls
    assert refused["id"] == "b" and "/amount" in refused["error"]
    assert refused["args"] == '{"account": "B", "amount": 1, "amount": 2}'


def test_provider_built_in_tools_are_skipped():
    from toolfix.hooks.langchain import toolset_of

    tools = toolset_of([*make_tools([]), {"type": "web_search_preview"}])
    assert tools.names == ["get_weather", "transfer"]


def test_a_call_in_a_list_content_runs_and_other_blocks_stay():
    # Anthropic, Gemini and the Responses API give `content` as a list of blocks.
    ran = []
    image = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}
    leak = {"type": "text", "text": 'On it.<tool_call>{"name": "get_weather", "arguments": {"city": "Lima"}}</tool_call>'}
    result, _ = run([AIMessage(content=[image, leak]), AIMessage(content="Warm.")], ran)
    assert ran == [("get_weather", "Lima", 1)]
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.content == [image, {"type": "text", "text": "On it."}]


def test_a_list_content_without_calls_is_left_as_it_was():
    tools = make_tools([])
    content = [{"type": "thinking", "thinking": "The user greets me.", "signature": "s"}, {"type": "text", "text": "Hello!"}]
    message = AIMessage(content=content)
    fixed = fix_ai_message(message, tools)
    assert fixed.content is content or fixed.content == content
    assert fixed.tool_calls == []


def test_a_call_left_in_thinking_is_recovered():
    tools = make_tools([])
    thinking = {"type": "thinking", "thinking": '<tool_call>{"name": "get_weather", "arguments": {"city": "Quito"}}</tool_call>', "signature": "s"}
    fixed = fix_ai_message(AIMessage(content=[thinking]), tools)
    assert [(c["name"], c["args"]) for c in fixed.tool_calls] == [("get_weather", {"city": "Quito"})]


def test_max_tokens_counts_as_cut_off():
    # Anthropic says `stop_reason: "max_tokens"`; a cut call to a tool that changes things never runs.
    tools = make_tools([])
    cut = {"type": "text", "text": '<tool_call>{"name": "transfer", "arguments": {"account": "A-7", "amount": 50'}
    fixed = fix_ai_message(AIMessage(content=[cut], response_metadata={"stop_reason": "max_tokens"}), tools)
    assert fixed.tool_calls == []
    (refused,) = fixed.invalid_tool_calls
    assert "cut off" in refused["error"]
