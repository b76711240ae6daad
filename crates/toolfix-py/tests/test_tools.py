"""ToolSet and CallOutcome: construction from every form, repairs, refusals, byte for byte."""

import json
import threading

import pydantic
import pytest

import toolfix
from conftest import TRANSFER, WEATHER


def test_valid_arguments_come_back_byte_for_byte(tools):
    text = '{"city": "Paris",   "days": 3}'
    out = tools.repair_call("get_weather", text)
    assert out.ok and out.outcome == "untouched"
    assert out.arguments_json == text
    assert out.arguments == {"city": "Paris", "days": 3}
    assert out.repairs == [] and out.text_fixes == [] and out.message is None


def test_repaired_call_reports_what_changed(tools):
    out = tools.repair_call("GetWeather", "{'city': 'Paris', 'days': '3'}")
    assert out.ok and out.outcome == "repaired"
    assert out.name == "get_weather"
    assert out.arguments == {"city": "Paris", "days": 3}
    assert out.arguments_json == '{"city": "Paris", "days": 3}'
    assert out.repairs == [{"kind": "coerced_scalar", "path": "/days", "before": "3", "after": 3}]
    assert {f["kind"] for f in out.text_fixes} == {"single_quotes"}


def test_arguments_is_a_new_dict_each_time(tools):
    out = tools.repair_call("get_weather", '{"city": "Paris"}')
    out.arguments["city"] = "Lyon"
    assert out.arguments == {"city": "Paris"}


def test_refusal_tells_the_model_what_to_fix(tools):
    out = tools.repair_call("get_weather", '{"days": 3}')
    assert not out.ok and not out
    assert out.outcome == "rejected"
    assert out.arguments is None and out.arguments_json is None
    assert "/city" in out.message
    assert out.issues[0]["path"] == "/city"


def test_a_cut_call_never_reaches_a_tool_that_changes_things(tools):
    out = tools.repair_call("transfer", '{"account": "A-7", "amount": 50')
    assert not out.ok
    assert "cut off" in out.message


def test_hit_token_limit_refuses_even_when_only_closers_are_missing(tools):
    assert tools.repair_call("transfer", '{"account": "A-7", "amount": 50}').ok
    assert tools.repair_call("get_weather", '{"city": "Paris"').ok
    assert not tools.repair_call("get_weather", '{"city": "Paris"', hit_token_limit=True).ok


def test_read_only_tool_keeps_the_complete_values(tools):
    ro = tools.with_read_only("get_weather")
    assert ro.is_read_only("get_weather") and not tools.is_read_only("get_weather")
    out = ro.repair_call("get_weather", '{"city": "Paris", "days": 1')
    assert out.ok
    assert out.arguments == {"city": "Paris"}
    assert out.notes


def test_duplicate_key_with_different_values_is_refused(tools):
    out = tools.repair_call("transfer", '{"account": "A-7", "amount": 5, "amount": 500}')
    assert not out.ok and "/amount" in out.message


def test_unknown_tool_is_refused_with_the_names(tools):
    out = tools.repair_call("get_wether", '{"city": "Paris"}')
    assert not out.ok and "get_weather" in out.message


def test_arguments_as_a_dict(tools):
    out = tools.repair_call("get_weather", {"city": "Paris", "days": "2"})
    assert out.ok and out.arguments == {"city": "Paris", "days": 2}


def test_every_tool_form():
    params = WEATHER["function"]["parameters"]
    forms = [
        toolfix.ToolSet.from_openai([WEATHER]),
        toolfix.ToolSet.from_openai([{"type": "function", "name": "get_weather", "parameters": params}]),
        toolfix.ToolSet.from_anthropic([{"name": "get_weather", "description": "d", "input_schema": params}]),
        toolfix.ToolSet.from_mcp([{"name": "get_weather", "inputSchema": params}]),
        toolfix.ToolSet.from_schemas({"get_weather": params}),
        toolfix.ToolSet([{"name": "get_weather", "parameters": params}]),
    ]
    for tools in forms:
        assert tools.names == ["get_weather"] and "get_weather" in tools and len(tools) == 1
        assert tools.repair_call("get_weather", "{'city': 'Paris'}").arguments == {"city": "Paris"}


def test_mcp_read_only_hint_and_sdk_objects():
    import mcp.types

    tool = mcp.types.Tool(
        name="search",
        inputSchema={"type": "object", "properties": {"q": {"type": "string"}}},
        annotations=mcp.types.ToolAnnotations(readOnlyHint=True),
    )
    tools = toolfix.ToolSet.from_mcp([tool])
    assert tools.is_read_only("search")


def test_from_pydantic_models():
    class GetWeather(pydantic.BaseModel):
        """Weather forecast for a city."""

        city: str
        days: int = 1

    tools = toolfix.ToolSet.from_pydantic([GetWeather])
    assert tools.names == ["GetWeather"]
    out = tools.repair_call("GetWeather", '{"city": "Paris", "days": "2"}')
    assert out.arguments == {"city": "Paris", "days": 2}
    assert GetWeather(**out.arguments).days == 2


def test_read_only_keyword():
    tools = toolfix.ToolSet.from_openai([WEATHER, TRANSFER], read_only=["get_weather"])
    assert tools.is_read_only("get_weather") and not tools.is_read_only("transfer")


def test_broken_definitions_are_a_value_error():
    with pytest.raises(ValueError):
        toolfix.ToolSet([{"name": "x", "parameters": {"type": "no-such-type"}}])
    with pytest.raises(ValueError):
        toolfix.ToolSet({"name": "x"})
    with pytest.raises(TypeError):
        toolfix.ToolSet([object()])


def test_to_dict_matches_the_command_line(tools):
    out = tools.repair_call("get_weather", "{'city': 'Paris'}")
    d = out.to_dict()
    assert d["name"] == "get_weather" and d["outcome"] == "repaired" and d["arguments"] == {"city": "Paris"}
    json.dumps(d)


def test_tool_sets_are_shared_between_threads(tools):
    results = []

    def work():
        for _ in range(200):
            results.append(tools.repair_call("get_weather", "{'city': 'Paris', 'days': '3'}").arguments)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 800 and all(r == {"city": "Paris", "days": 3} for r in results)


def test_effects():
    tools = toolfix.ToolSet.from_openai([WEATHER, TRANSFER], read_only=["get_weather"], idempotent=["transfer"])
    assert tools.effect("get_weather") == "read_only" and tools.effect("transfer") == "idempotent"
    assert tools.effect("GetWeather") == "read_only" and tools.effect("nope") is None
    mutating = tools.with_effect("transfer", "mutating").with_read_only("get_weather", False)
    assert mutating.effect("transfer") == "mutating" and mutating.effect("get_weather") == "mutating"
    with pytest.raises(ValueError):
        tools.with_effect("transfer", "sometimes")
    with pytest.raises(ValueError):
        tools.with_effect("no_such_tool", "read_only")
