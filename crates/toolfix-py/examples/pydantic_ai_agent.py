"""pydantic-ai with toolfix: the model (a FunctionModel standing in for a real one) sends
its call with single quotes, a trailing comma and "3" for an integer; the tool runs with
{"city": "Paris", "days": 3}.

    pip install 'toolfix[pydantic-ai]'
    python crates/toolfix-py/examples/pydantic_ai_agent.py
"""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolfix.hooks.pydantic_ai import ToolfixCapability


def model(messages, info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("get_weather", "{'city': 'Paris', 'days': '3',}")])
    return ModelResponse(parts=[TextPart(f"Done: {messages[-1].parts[0].content}")])


agent = Agent(FunctionModel(model), capabilities=[ToolfixCapability()])


@agent.tool_plain
def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"sunny in {city} for {days} days"


print(agent.run_sync("Weather in Paris for 3 days?").output)
