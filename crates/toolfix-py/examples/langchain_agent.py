"""LangChain with toolfix: the model (a scripted chat model standing in for a real one)
leaves its call in the text, Hermes style, with "3" for an integer; the middleware moves it
into tool_calls and the tool runs with {"city": "Paris", "days": 3}.

    pip install 'toolfix[langchain]'
    python crates/toolfix-py/examples/langchain_agent.py
"""

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from toolfix.hooks.langchain import ToolfixMiddleware


class ScriptedChatModel(BaseChatModel):
    replies: list[AIMessage]
    sent: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.sent += 1
        return ChatResult(generations=[ChatGeneration(message=self.replies[self.sent - 1])])


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"sunny in {city} for {days} days"


model = ScriptedChatModel(replies=[
    AIMessage(content='<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}</tool_call>'),
    AIMessage(content="It is sunny."),
])
agent = create_agent(model, tools=[get_weather], middleware=[ToolfixMiddleware()])
messages = agent.invoke({"messages": [HumanMessage("Weather in Paris for 3 days?")]})["messages"]
print(messages[2].content)  # the tool's output
print(messages[-1].content)
