"""Hostile input through loads, repair_call and fix_reply: a clean error or a result, no
crash, no hang, bounded memory (the 1 MB inputs of the Rust tests)."""

import resource

import pytest

import toolfix

MB = 1 << 20

HOSTILE = [
    "[" * MB,
    '{"a":' * (MB // 5),
    "{" * MB,
    '"' + "\\" * MB,
    "[" + "," * MB + "]",
    '{"a": "' + '" x ' * (MB // 4) + '"}',
    "```json\n" * (MB // 8),
    "<tool_call>" * (MB // 11),
    "\x00\xff" * (MB // 2),
    "{'a': " * (MB // 6),
]


def peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_megabyte_inputs_end_cleanly(index, tools):
    text = HOSTILE[index]
    before = peak_kb()
    with pytest.raises(toolfix.RepairError) as info:
        toolfix.loads(text)
    assert info.value.kind == "input_too_large"
    try:
        toolfix.loads(text, max_input_bytes=2 * MB)
    except toolfix.RepairError as e:
        assert e.kind in {"too_deep", "no_json", "syntax", "empty_input"}
    out = tools.repair_call("get_weather", text)
    assert not out.ok
    try:
        tools.fix_reply(content=text)
    except ValueError:
        pass
    # Bounded: far less than a copy of the input per byte.
    assert peak_kb() - before < 200 * 1024
