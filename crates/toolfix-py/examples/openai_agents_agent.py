"""The OpenAI Agents SDK with toolfix: the model (the SDK's ScriptedModel standing in for
a real one) calls `GetWeather` (the tool is `get_weather`, which would abort the run) with
broken JSON; the run goes on and the tool gets {"city": "Paris", "days": 3}.

    pip install 'toolfix[openai-agents]'
    OPENAI_AGENTS_DISABLE_TRACING=1 python crates/toolfix-py/examples/openai_agents_agent.py
"""

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from toolfix.hooks.openai_agents import ToolfixModel


@function_tool
def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"sunny in {city} for {days} days"


model = ScriptedModel([
    [ResponseFunctionToolCall(type="function_call", call_id="call_1", name="GetWeather", arguments="{'city': 'Paris', 'days': '3'")],
    [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                           content=[ResponseOutputText(type="output_text", text="It is sunny.", annotations=[])])],
])
agent = Agent(name="weather", tools=[get_weather], model=ToolfixModel(model))
result = Runner.run_sync(agent, "Weather in Paris for 3 days?")
print(result.new_items[1].output)  # the tool's output
print(result.final_output)
