"""What every hook shares: tool sets built from a framework's tool definitions, cached."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable
from threading import Lock
from typing import Any

from toolfix import ToolSet

_CACHE: OrderedDict[str, ToolSet] = OrderedDict()
_CACHE_SIZE = 64
_LOCK = Lock()


def toolset_for(definitions: Iterable[dict[str, Any]], read_only: Iterable[str] = ()) -> ToolSet:
    """A ToolSet for bare definitions (``{"name", "description", "parameters"}``), built
    once per distinct list (the last 64 lists are kept). A definition the library cannot
    read is left out (``ToolSet.broken``): the hooks leave calls to it as the framework
    sent them, for the framework's own validation."""
    defs = list(definitions)
    ro = sorted(set(read_only))
    key = json.dumps([defs, ro], sort_keys=True, default=str)
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    names = {d.get("name") for d in defs}
    tools = ToolSet(defs, read_only=[n for n in ro if n in names], partial=True)
    with _LOCK:
        _CACHE[key] = tools
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return tools


def arguments_text(args: Any) -> str:
    """The arguments as the model wrote them: a string as it is, anything else as JSON."""
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args
    return json.dumps(args)
