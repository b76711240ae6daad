"""toolfix: make LLM tool calls land.

Models emit tool calls that are almost right: arguments in a Markdown fence or in prose,
trailing commas, single quotes, Python literals, JSON cut off by the token limit, ``"42"``
where an integer belongs, ``ticket_id`` for ``ticketId``, the whole call left in the text.
toolfix recovers every call that can be recovered honestly, leaves valid calls byte for
byte untouched, refuses to guess, and when it refuses, says what the model should fix.

JSON, as a drop-in for ``json_repair``::

    >>> import toolfix
    >>> toolfix.loads("{'city': 'Paris', 'days': 3,}")
    {'city': 'Paris', 'days': 3}

Tool calls, against the tools' schemas::

    >>> tools = toolfix.ToolSet.from_openai([{"type": "function", "function": {
    ...     "name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    ...     "required": ["city"]}}}])
    >>> out = tools.repair_call("get_weather", "{'city': 'Paris', 'days': '3'}")
    >>> out.ok, out.arguments
    (True, {'city': 'Paris', 'days': 3})

Framework hooks live in ``toolfix.hooks`` (one module per framework, importable when
the framework is installed).
"""

from toolfix._toolfix import (
    CallFixer,
    CallOutcome,
    FixedCall,
    FixedReply,
    RepairError,
    ReplyStream,
    StreamEvent,
    ToolSet,
    __version__,
    fix_reply,
    loads,
    repair_json,
)

__all__ = [
    "CallFixer",
    "CallOutcome",
    "FixedCall",
    "FixedReply",
    "RepairError",
    "ReplyStream",
    "StreamEvent",
    "ToolSet",
    "__version__",
    "fix_reply",
    "loads",
    "repair_json",
]
