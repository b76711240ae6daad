"""LiteLLM with toolfix: the callback the proxy runs after each call, here on a response
made by litellm's own mock completion (offline): the model wrote `{'city': 'Paris',
'days': '3'}`; the client receives {"city": "Paris", "days": 3}.

In a proxy config.yaml:

    litellm_settings:
      callbacks: toolfix.hooks.litellm.proxy_handler

    pip install 'toolfix[litellm]'
    LITELLM_LOCAL_MODEL_COST_MAP=True python crates/toolfix-py/examples/litellm_proxy_hook.py
"""

import asyncio

import litellm
from litellm.proxy._types import UserAPIKeyAuth

from toolfix.hooks.litellm import ToolfixCallback

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
          "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}}]
data = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Weather in Paris for 3 days?"}], "tools": tools}
response = litellm.completion(**data, mock_tool_calls=[
    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{'city': 'Paris', 'days': '3'}"}}])

fixed = asyncio.run(ToolfixCallback().async_post_call_success_hook(data=data, user_api_key_dict=UserAPIKeyAuth(), response=response))
call = fixed.choices[0].message.tool_calls[0]
print(call.function.name, call.function.arguments)
