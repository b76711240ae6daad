"""Shared fixtures: the tool sets the tests call, and the repository's own files."""

import os
import pathlib

import pytest

# Offline: litellm reads its price list from the package, the Agents SDK exports no traces.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import toolfix  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}

TRANSFER = {
    "type": "function",
    "function": {
        "name": "transfer",
        "description": "Move money between accounts.",
        "parameters": {
            "type": "object",
            "properties": {"account": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["account", "amount"],
        },
    },
}


@pytest.fixture
def tools() -> toolfix.ToolSet:
    return toolfix.ToolSet.from_openai([WEATHER, TRANSFER])
