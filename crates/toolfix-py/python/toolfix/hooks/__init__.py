"""Drop-in hooks for agent frameworks, one module per framework, each importable only when
its framework is installed (``pip install 'toolfix[pydantic-ai]'`` and so on):

- ``toolfix.hooks.pydantic_ai``: ``ToolfixCapability`` for ``Agent(capabilities=[...])``;
- ``toolfix.hooks.openai_agents``: ``ToolfixModel`` (wraps any Agents SDK model) and
  ``repairing_tool`` (wraps a ``FunctionTool``);
- ``toolfix.hooks.langchain``: ``fix_ai_message`` and ``ToolfixMiddleware`` for
  ``create_agent(middleware=[...])``;
- ``toolfix.hooks.litellm``: ``ToolfixCallback``, a ``CustomLogger`` for LiteLLM's proxy.
"""
