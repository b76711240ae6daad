"""The pydantic-ai capability against the real pydantic-ai, with a FunctionModel that
sends broken calls: the tool runs with the repaired arguments, or the model gets the
refusal as a retry prompt."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, RetryPromptPart, TextPart, ThinkingPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolfix.hooks.pydantic_ai import ToolfixCapability


def scripted(*replies):
    """A model that answers with `replies` in turn, and records what it was sent."""
    seen = []

    def model(messages, info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return replies[len(seen) - 1]

    return FunctionModel(model), seen


def make_agent(model, ran, capability=None):
    agent = Agent(model, capabilities=[capability or ToolfixCapability()])

    @agent.tool_plain
    def get_weather(city: str, days: int = 1) -> str:
        """Weather forecast for a city."""
        ran.append(("get_weather", city, days))
        return f"sunny in {city} for {days} days"

    @agent.tool_plain
    def transfer(account: str, amount: float) -> str:
        """Move money."""
        ran.append(("transfer", account, amount))
        return "done"

    return agent


def test_broken_arguments_are_repaired_before_validation():
    model, seen = scripted(
        ModelResponse(parts=[ToolCallPart("get_weather", "```json\n{'city': 'Paris', 'days': '3',}\n```", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("It is sunny.")]),
    )
    ran = []
    result = make_agent(model, ran).run_sync("weather in Paris for 3 days?")
    assert ran == [("get_weather", "Paris", 3)]
    assert result.output == "It is sunny."
    # The history holds what ran: valid JSON goes back to the provider.
    call = next(p for m in result.all_messages() if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart))
    assert call.args == '{"city": "Paris", "days": 3}'


def test_without_toolfix_the_same_call_fails_validation():
    model, seen = scripted(
        ModelResponse(parts=[ToolCallPart("get_weather", "{'city': 'Paris', 'days': '3',}", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("gave up")]),
    )
    ran = []
    agent = Agent(model)

    @agent.tool_plain
    def get_weather(city: str, days: int = 1) -> str:
        ran.append(city)
        return "sunny"

    agent.run_sync("weather?")
    assert ran == []


def test_a_cut_off_call_is_refused_with_a_message_the_model_reads():
    model, seen = scripted(
        ModelResponse(parts=[ToolCallPart("transfer", '{"account": "A-7", "amount": 50', tool_call_id="c1")], finish_reason="length"),
        ModelResponse(parts=[ToolCallPart("transfer", '{"account": "A-7", "amount": 500}', tool_call_id="c2")]),
        ModelResponse(parts=[TextPart("Sent.")]),
    )
    ran = []
    result = make_agent(model, ran).run_sync("send 500 to A-7")
    assert ran == [("transfer", "A-7", 500)]
    # pydantic-ai sends a ModelRetry back as the call's (retried) result.
    back = [p for m in seen[1] if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, (RetryPromptPart, ToolReturnPart))]
    assert back and "cut off" in str(back[0].content)
    assert result.output == "Sent."


def test_a_call_left_in_the_text_is_moved_into_a_tool_call():
    leak = "Let me check.\n<tool_call>\n{\"name\": \"GetWeather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"}}\n</tool_call>"
    model, seen = scripted(
        ModelResponse(parts=[TextPart(leak)]),
        ModelResponse(parts=[TextPart("Cold.")]),
    )
    ran = []
    result = make_agent(model, ran).run_sync("weather in Oslo?")
    assert ran == [("get_weather", "Oslo", 2)]
    returns = [p for m in seen[1] if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returns and returns[0].tool_name == "get_weather"
    assert result.output == "Cold."


def test_a_call_left_in_the_thinking_is_recovered():
    # A thinking model that wrote its call inside the reasoning and nothing else.
    thought = 'The user wants Oslo.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>'
    model, seen = scripted(
        ModelResponse(parts=[ThinkingPart(thought)]),
        ModelResponse(parts=[TextPart("Cold.")]),
    )
    ran = []
    result = make_agent(model, ran).run_sync("weather in Oslo?")
    assert ran == [("get_weather", "Oslo", 2)]
    assert result.output == "Cold."
    first = next(m for m in result.all_messages() if isinstance(m, ModelResponse))
    assert isinstance(first.parts[0], ThinkingPart) and first.parts[0].content == thought


def test_a_call_in_the_thinking_does_not_run_beside_a_real_one():
    # The reasoning drafted one call, the model then made another: only the real one runs.
    thought = '<tool_call>{"name": "transfer", "arguments": {"account": "B-1", "amount": 9}}</tool_call>'
    model, seen = scripted(
        ModelResponse(parts=[ThinkingPart(thought), ToolCallPart("get_weather", '{"city": "Oslo"}', tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("Cold.")]),
    )
    ran = []
    make_agent(model, ran).run_sync("weather in Oslo?")
    assert ran == [("get_weather", "Oslo", 1)]


def test_a_cut_call_in_the_thinking_to_a_tool_that_changes_things_is_refused():
    thought = '<tool_call>{"name": "transfer", "arguments": {"account": "A-7", "amount": 50'
    model, seen = scripted(
        ModelResponse(parts=[ThinkingPart(thought)], finish_reason="length"),
        ModelResponse(parts=[TextPart("Sorry.")]),
    )
    ran = []
    make_agent(model, ran).run_sync("send 500 to A-7")
    assert ran == []
    # A refusal raised after the model request comes back to the model as retry feedback.
    back = [str(p.content) for m in seen[1][1:] if isinstance(m, ModelRequest) for p in m.parts]
    assert any("cut off" in b and "transfer" in b for b in back)


def test_a_native_call_copied_in_the_text_runs_once():
    # The model called the tool and also wrote the same call in its text: one call, the native one.
    leak = 'Sending.<tool_call>{"name": "transfer", "arguments": {"account": "A-7", "amount": 5}}</tool_call>'
    model, seen = scripted(
        ModelResponse(parts=[TextPart(leak), ToolCallPart("transfer", '{"account": "A-7", "amount": 5}', tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("Sent.")]),
    )
    ran = []
    result = make_agent(model, ran).run_sync("send 5 to A-7")
    assert ran == [("transfer", "A-7", 5)]
    assert result.output == "Sent."
    first = next(m for m in result.all_messages() if isinstance(m, ModelResponse))
    assert [p.tool_call_id for p in first.parts if isinstance(p, ToolCallPart)] == ["c1"]


def test_read_only_tools_keep_complete_values_of_a_cut_call():
    model, seen = scripted(
        ModelResponse(parts=[ToolCallPart("get_weather", '{"city": "Rome", "days": 1', tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("ok")]),
    )
    ran = []
    make_agent(model, ran, ToolfixCapability(read_only=["get_weather"])).run_sync("weather?")
    # `days` touched the cut: dropped (optional), the default applies.
    assert ran == [("get_weather", "Rome", 1)]


def streamed(*turns):
    """A streaming FunctionModel: each turn is a list of text pieces or tool-call deltas."""
    seen = []

    async def stream(messages, info: AgentInfo):
        seen.append(messages)
        for piece in turns[len(seen) - 1]:
            yield piece

    return FunctionModel(stream_function=stream)


def test_streamed_tool_call_deltas_are_repaired():
    import asyncio

    from pydantic_ai.models.function import DeltaToolCall

    model = streamed(
        [{0: DeltaToolCall(name="get_weather", json_args="{'city': 'Par", tool_call_id="c1")}, {0: DeltaToolCall(json_args="is', 'days': '3',}")}],
        ["Sunny", " today."],
    )
    ran = []
    agent = make_agent(model, ran)

    async def go():
        async with agent.run_stream("weather?") as run:
            return await run.get_output()

    assert asyncio.run(go()) == "Sunny today."
    assert ran == [("get_weather", "Paris", 3)]


def test_a_call_streamed_in_the_text_is_recovered():
    import asyncio

    model = streamed(['Checking.<tool_call>{"name": "get_weather", ', '"arguments": {"city": "Oslo"}}</tool_call>'], ["Cold."])
    ran = []
    agent = make_agent(model, ran)

    async def go():
        async with agent.run_stream_events("weather?") as events:
            async for _ in events:
                pass

    asyncio.run(go())
    assert ran == [("get_weather", "Oslo", 1)]
