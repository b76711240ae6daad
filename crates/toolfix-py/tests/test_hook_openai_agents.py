"""The Agents SDK hooks against the real openai-agents, with the SDK's own scripted test
model sending broken calls: the tool runs with the repaired arguments, or the model gets
the refusal."""

import asyncio

import pytest
from agents import Agent, Runner, function_tool
from agents.exceptions import ModelBehaviorError
from agents.testing import ScriptedModel
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from toolfix.hooks.openai_agents import ToolfixModel, repairing_tool


def call(name, arguments, call_id="call_1"):
    return ResponseFunctionToolCall(type="function_call", call_id=call_id, name=name, arguments=arguments, status="completed")


def text(t):
    return ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text=t, annotations=[])])


def tools(ran):
    @function_tool
    def get_weather(city: str, days: int = 1) -> str:
        """Weather forecast for a city."""
        ran.append(("get_weather", city, days))
        return f"sunny in {city}"

    @function_tool
    def transfer(account: str, amount: float) -> str:
        """Move money."""
        ran.append(("transfer", account, amount))
        return "done"

    return [get_weather, transfer]


def run(model, ran, streamed=False, tool_list=None):
    agent = Agent(name="a", instructions="help", tools=tool_list or tools(ran), model=model)
    if not streamed:
        return Runner.run_sync(agent, "go")

    async def go():
        result = Runner.run_streamed(agent, "go")
        result.shown = ""
        async for event in result.stream_events():
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                result.shown += event.data.delta
        return result

    return asyncio.run(go())


def test_without_toolfix_broken_json_never_reaches_the_tool():
    ran = []
    run(ScriptedModel([[call("get_weather", "{'city': 'Paris',}")], [text("done")]]), ran)
    assert ran == []


def test_without_toolfix_an_unknown_tool_aborts_the_run():
    with pytest.raises(ModelBehaviorError):
        run(ScriptedModel([[call("GetWeather", '{"city": "Paris"}')], [text("done")]]), [])


@pytest.mark.parametrize("streamed", [False, True])
def test_broken_arguments_and_a_variant_name_are_repaired(streamed):
    ran = []
    inner = ScriptedModel([[call("GetWeather", "```json\n{'city': 'Paris', 'days': '3',}\n```")], [text("Sunny.")]])
    result = run(ToolfixModel(inner), ran, streamed)
    assert ran == [("get_weather", "Paris", 3)]
    assert result.final_output == "Sunny."


@pytest.mark.parametrize("streamed", [False, True])
def test_a_call_left_in_the_text_runs(streamed):
    ran = []
    leak = 'Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    inner = ScriptedModel([[text(leak)], [text("Cold.")]])
    result = run(ToolfixModel(inner), ran, streamed)
    assert ran == [("get_weather", "Oslo", 1)]
    assert result.final_output == "Cold."
    if streamed:
        # The markup never reached the stream: the text shown is the prose.
        assert result.shown == "Checking.Cold."


def test_a_refused_call_goes_back_to_the_model_with_the_refusal():
    ran = []
    inner = ScriptedModel([
        [call("transfer", '{"account": "A-7", "amount": 50')],
        [call("transfer", '{"account": "A-7", "amount": 500}', "call_2")],
        [text("Sent.")],
    ])
    result = run(ToolfixModel(inner), ran)
    assert ran == [("transfer", "A-7", 500)]
    second = inner.calls[1].input
    outputs = [i for i in second if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert outputs and "cut off" in outputs[0]["output"]
    assert result.final_output == "Sent."


def test_streamed_a_refused_call_goes_back_to_the_model_and_no_text_is_shown_twice():
    ran = []
    inner = ScriptedModel([
        [text("Moving it."), call("transfer", '{"account": "A-7", "amount": 50')],
        [text("Moving it."), call("transfer", '{"account": "A-7", "amount": 500}', "call_2")],
        [text("Sent.")],
    ])
    result = run(ToolfixModel(inner), ran, streamed=True)
    assert ran == [("transfer", "A-7", 500)]
    second = inner.calls[1].input
    outputs = [i for i in second if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert outputs and "cut off" in outputs[0]["output"]
    assert result.final_output == "Sent."
    assert result.shown == "Moving it.Sent."


def test_streamed_refused_until_the_end_the_turn_says_why():
    ran = []
    cut = call("transfer", '{"account": "A-7", "amount": 50')
    inner = ScriptedModel([[cut], [call("transfer", '{"account": "A-7", "amount": 5', "call_2")], [text("ok")]])
    result = run(ToolfixModel(inner, max_reprompts=1), ran, streamed=True)
    assert ran == []
    assert len(inner.calls) == 2
    assert "cut off" in result.final_output


def test_an_unknown_tool_does_not_abort_the_run():
    ran = []
    inner = ScriptedModel([[call("send_email", '{"to": "x"}')], [call("send_email", '{"to": "x"}', "call_2")]])
    result = run(ToolfixModel(inner), ran)
    assert ran == []
    assert "send_email" in result.final_output


def test_repairing_tool_repairs_and_refuses():
    ran = []
    weather, transfer = tools(ran)
    inner = ScriptedModel([
        [call("get_weather", "{'city': 'Rome', 'days': '2'}"), call("transfer", '{"account": "B", "amount": 5, "amount": 50}', "call_2")],
        [text("ok")],
    ])
    run(inner, ran, tool_list=[repairing_tool(weather), repairing_tool(transfer)])
    assert ran == [("get_weather", "Rome", 2)]
    outputs = [i for i in inner.calls[1].input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    refusal = next(o["output"] for o in outputs if o["call_id"] == "call_2")
    assert "/amount" in refusal
