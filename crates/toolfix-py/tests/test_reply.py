"""fix_reply and ReplyStream: every channel, ids, the storm guard; streaming == whole."""

import random

import pytest

import toolfix

LEAK = "Let me check.<tool_call>{\"name\": \"GetWeather\", \"arguments\": {'city': 'Paris', 'days': '3'}}</tool_call>"


def test_calls_in_content_are_recovered(tools):
    fixed = tools.fix_reply(content=LEAK)
    assert fixed.outcome == "usable" and fixed.changed_calls
    assert fixed.content == "Let me check."
    (call,) = fixed.calls
    assert call.name == "get_weather" and call.written_name == "GetWeather"
    assert call.format == "hermes" and call.channel == "content"
    assert call.ok and call.arguments == {"city": "Paris", "days": 3}
    assert call.id.startswith("call_")


def test_server_calls_keep_their_ids_and_bytes(tools):
    text = '{"city": "Paris",  "days": 2}'
    fixed = tools.fix_reply(tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": text}}])
    (call,) = fixed.calls
    assert call.id == "call_1" and call.status == "untouched" and call.arguments_json == text
    assert not fixed.changed_calls


def test_a_refused_call_carries_the_message(tools):
    fixed = tools.fix_reply(tool_calls=[{"id": "c", "function": {"name": "transfer", "arguments": '{"account": "A"'}}], finish_reason="length")
    (call,) = fixed.calls
    assert call.status == "refused" and not call.ok and call.arguments is None
    assert "cut off" in call.message
    assert fixed.outcome == "refused"


def test_calls_keep_the_arguments_as_written(tools):
    fixed = tools.fix_reply(content=LEAK, tool_calls=[{"id": "c", "function": {"name": "transfer", "arguments": '{"account": "A"'}}], finish_reason="length")
    server, leaked = sorted(fixed.calls, key=lambda c: c.channel != "tool_calls")
    assert not server.ok and server.written_arguments == '{"account": "A"'
    assert leaked.ok and leaked.written_arguments == "{'city': 'Paris', 'days': '3'}" and leaked.arguments == {"city": "Paris", "days": 3}


def test_a_long_piece_is_pushed_without_the_gil(tools):
    text = "word " * 20_000 + LEAK
    stream = toolfix.ReplyStream(tools)
    events = stream.push_content(text)
    last, fixed = stream.finish()
    assert "".join(e.text for e in events + last if e.kind == "content") == fixed.content
    assert [c.arguments for c in fixed.calls] == [{"city": "Paris", "days": 3}]


def test_reasoning_calls_are_used_when_no_other_channel_has_one(tools):
    fixed = tools.fix_reply(content="", reasoning_content='<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>')
    (call,) = fixed.calls
    assert call.channel == "reasoning" and call.arguments == {"city": "Oslo"}


def test_storm_guard_reads_the_history(tools):
    call = {"id": "c0", "type": "function", "function": {"name": "transfer", "arguments": '{"account": "A", "amount": 5}'}}
    history = []
    for i in range(3):
        history.append({"role": "assistant", "content": None, "tool_calls": [dict(call, id=f"c{i}")]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    fixed = tools.fix_reply(tool_calls=[dict(call, id="c9")], history=history)
    (out,) = fixed.calls
    assert out.status == "suppressed" and out.suppressed and out.message


def test_without_tools_json_is_salvaged():
    fixed = toolfix.fix_reply(content="<tool_call>{'name': 'anything', 'arguments': {'a': 1,}}</tool_call>")
    (call,) = fixed.calls
    assert call.name == "anything" and call.arguments == {"a": 1}


def test_to_dict(tools):
    d = tools.fix_reply(content=LEAK).to_dict()
    assert d["outcome"] == "usable" and d["tool_calls"][0]["arguments"] == {"city": "Paris", "days": 3}


def stream_all(tools, content, deltas, finish, chunks):
    stream = toolfix.ReplyStream(tools)
    events = []
    pos = 0
    while pos < len(content):
        n = chunks(len(content) - pos)
        events += stream.push_content(content[pos:pos + n])
        pos += n
    for d in deltas:
        events += stream.push_tool_call(**d)
    last, fixed = stream.finish(finish)
    return events + last, fixed


def summary(fixed):
    return (fixed.content, fixed.reasoning_content, [(c.id, c.name, c.status, c.arguments_json, c.message) for c in fixed.calls])


@pytest.mark.parametrize("seed", range(8))
def test_streaming_equals_whole(tools, seed):
    rng = random.Random(seed)
    content = "Sure. " + LEAK + " and <tool_call>{\"name\": \"transfer\", \"arguments\": {\"account\": \"B\", \"amount\": 1}}</tool_call> done"
    args = '{"city": "Rome", "days": "2"}'
    deltas = [{"index": 0, "id": "call_a", "name": "get_weather"}]
    deltas += [{"index": 0, "arguments": args[i:i + 5]} for i in range(0, len(args), 5)]
    whole = tools.fix_reply(content=content, tool_calls=[{"id": "call_a", "function": {"name": "get_weather", "arguments": args}}], finish_reason="stop")
    for chunks in (lambda rest: rest, lambda rest: 1, lambda rest: rng.randint(1, 9)):
        events, fixed = stream_all(tools, content, deltas, "stop", chunks)
        assert summary(fixed) == summary(whole)
        shown = "".join(e.text for e in events if e.kind == "content")
        assert shown == whole.content
        streamed_calls = [e.call.id for e in events if e.kind == "call"]
        assert streamed_calls == [c.id for c in whole.calls]


def test_a_finished_stream_cannot_be_used(tools):
    stream = toolfix.ReplyStream(tools)
    stream.finish()
    with pytest.raises(RuntimeError):
        stream.push_content("x")


def test_dropping_a_stream_mid_way_is_fine(tools):
    for _ in range(50):
        stream = toolfix.ReplyStream(tools)
        stream.push_content("<tool_call>{")
        del stream


def test_call_fixer_fixes_one_call_at_a_time(tools):
    fixer = toolfix.CallFixer(tools)
    call = fixer.fix("GetWeather", "{'city': 'Paris', 'days': '3'}", id="c1")
    assert call.id == "c1" and call.name == "get_weather" and call.arguments == {"city": "Paris", "days": 3}
    assert fixer.fix("get_weather", {"city": "Rome"}).id.startswith("call_")
    refused = fixer.fix("transfer", '{"account": "A", "amount": 5, "amount": 50}', id="c2")
    assert refused.status == "refused" and "/amount" in refused.message
    cut = fixer.fix("transfer", '{"account": "A", "amount": 5}', at_cut=False)
    assert cut.ok


def test_call_fixer_storm_guard_counts_the_session(tools):
    fixer = toolfix.CallFixer(tools)
    statuses = []
    for i in range(3):
        call = fixer.fix("transfer", '{"account": "A", "amount": 5}', id=f"c{i}")
        statuses.append(call.status)
        fixer.record_result(f"c{i}", "ok")
    assert statuses[:2] == ["untouched", "untouched"] and statuses[2] == "suppressed"
