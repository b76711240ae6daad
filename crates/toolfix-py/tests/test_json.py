"""toolfix.loads and toolfix.repair_json: values, logs, errors, strict mode, layout."""

import json
import random

import pytest

import toolfix


def test_loads_repairs_common_damage():
    assert toolfix.loads("{'city': 'Paris', 'days': 3,}") == {"city": "Paris", "days": 3}
    assert toolfix.loads('```json\n{"a": True, "b": None}\n```') == {"a": True, "b": None}
    assert toolfix.loads('Sure: {a: 1, /* note */ "b": [1, 2,]} hope that helps') == {"a": 1, "b": [1, 2]}


def test_loads_values_match_json_loads_on_valid_text():
    text = '{"big": 123456789012345678901234567890, "neg": -7, "f": 2.5e3, "s": "x\\u00e9\\ud83d\\ude80\\n", "l": [], "o": {}, "t": true, "n": null}'
    assert toolfix.loads(text) == json.loads(text)
    assert type(toolfix.loads("1.0")) is float
    assert type(toolfix.loads("10")) is int


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randrange(-(2**70), 2**70)
    if kind == 3:
        return rng.uniform(-1e6, 1e6)
    if kind in (4, 5):
        alphabet = 'ab "\\/\n\té€🚀\x01'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(8)))
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_value(rng, 4) if rng.random() < 0.9 else "k": random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


@pytest.mark.parametrize("seed", range(20))
def test_loads_reads_strict_json_as_json_loads_does(seed):
    """Property: for valid JSON text, loads == json.loads (ints of any size, floats, escapes)."""
    rng = random.Random(seed)
    for _ in range(50):
        value = random_value(rng)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, indent=1)):
            assert toolfix.loads(text) == json.loads(text)


def test_valid_text_comes_back_byte_for_byte():
    for text in ['{"n": 1.50, "big": 12345678901234567890, "e": 1E5}', '[ 1 ,2 ]', '"x"', '{"k":"\\u00e9"}']:
        assert toolfix.repair_json(text) == text


def test_repair_json_keeps_what_was_written():
    assert toolfix.repair_json("{'n': 1.50, 'e': 1E5,}") == '{"n": 1.50, "e": 1E5}'


def test_ensure_ascii_escapes_non_ascii_only():
    assert toolfix.repair_json('{"a": "é🚀"}') == '{"a": "\\u00e9\\ud83d\\ude80"}'
    assert toolfix.repair_json('{"a": "é🚀"}', ensure_ascii=False) == '{"a": "é🚀"}'
    assert json.loads(toolfix.repair_json("{'a': 'é🚀'}")) == {"a": "é🚀"}


@pytest.mark.parametrize("indent", [0, 2, 4, "\t"])
def test_indent_lays_out_as_json_dumps(indent):
    value = {"a": [1, 2, {"b": None, "c": []}], "d": {}, "e": "x, y: z"}
    text = json.dumps(value)
    assert toolfix.repair_json(text, indent=indent) == json.dumps(value, indent=indent)


def test_return_objects_is_loads():
    assert toolfix.repair_json("{'a': 1}", return_objects=True) == {"a": 1}


def test_logging_lists_fixes_with_character_spans():
    text = "é {'a': 1,}"
    value, log = toolfix.loads(text, logging=True)
    assert value == {"a": 1}
    kinds = [entry["kind"] for entry in log]
    assert "single_quotes" in kinds and "trailing_comma" in kinds and "surrounding_prose" in kinds
    for entry in log:
        if "span" in entry:
            start, end = entry["span"]
            assert text[start:end] == entry["text"]
    repaired, log2 = toolfix.repair_json(text, logging=True)
    assert repaired == '{"a": 1}' and log2 == log


def test_a_cut_value_is_kept_as_written_and_reported_uncertain():
    value, log = toolfix.loads('{"account": "A-7", "amount": 50', logging=True)
    assert value == {"account": "A-7", "amount": 50}
    assert {"kind": "uncertain_number", "span": (29, 31), "text": "50"} in log


def test_a_cut_literal_is_not_completed():
    # json_repair completes `tr` to True; the model may have meant anything.
    value, log = toolfix.loads('{"a": 1, "ok": tr', logging=True)
    assert value.get("ok") is not True
    assert any(e["kind"] == "uncertain_literal" for e in log)


def test_duplicate_keys_are_logged():
    value, log = toolfix.loads('{"a": 1, "a": 2}', logging=True)
    assert value == {"a": 2}  # as json.loads
    assert {"kind": "duplicate_key", "pointer": "/a", "values": [1, 2]} in log


def test_unrecoverable_text_raises_a_value_error_that_points():
    with pytest.raises(toolfix.RepairError) as info:
        toolfix.loads("no json here\n]")
    err = info.value
    assert isinstance(err, ValueError)
    assert err.kind == "no_json"
    assert (err.lineno, err.colno) == (1, 1) or err.pos is not None
    assert "^" in str(err)
    with pytest.raises(toolfix.RepairError) as info:
        toolfix.loads("   ")
    assert info.value.kind == "empty_input"


def test_error_position_counts_characters():
    with pytest.raises(toolfix.RepairError) as info:
        toolfix.loads("éé ]")
    err = info.value
    if err.pos is not None:
        assert err.pos <= 3


def test_strict_refuses_structural_guesses():
    for text in ['{"key":"value"}["value"]', '{"missing" "colon"}', '{"key": , "key2": "v"}', '{"a": 1, "a": 2}', '{"a": 5']:
        with pytest.raises(toolfix.RepairError) as info:
            toolfix.loads(text, strict=True)
        assert "strict mode" in str(info.value)
    # Syntax alone is fine in strict mode.
    assert toolfix.loads("{'a': True,}", strict=True) == {"a": True}
    assert toolfix.loads('{"a": 1, "a": 1}', strict=True) == {"a": 1}


def test_input_size_is_capped_and_can_be_raised():
    big = '{"a": "' + "x" * (300 * 1024) + '"}'
    with pytest.raises(toolfix.RepairError) as info:
        toolfix.loads(big)
    assert info.value.kind == "input_too_large"
    assert toolfix.loads(big, max_input_bytes=1 << 20) == {"a": "x" * (300 * 1024)}


def test_not_a_string_is_a_type_error():
    with pytest.raises(TypeError):
        toolfix.loads(b"{}")  # type: ignore[arg-type]


def test_keys_read_through_the_cache_are_the_right_keys():
    # Many distinct keys (slots replaced), long keys (not cached), escaped and non-ASCII keys.
    for i in range(3000):
        key = f"k{i}" if i % 3 else "x" * (40 + i % 20)
        assert toolfix.loads(f'{{"{key}": {i}, "é": 1, "a\\"b": 2}}') == {key: i, "é": 1, 'a"b': 2}
    assert list(toolfix.loads('{"b": 1, "a": 2, "b": 3}')) == ["b", "a"]


@pytest.mark.parametrize("seed", range(10))
def test_layout_matches_json_dumps(seed):
    """Property: on valid text, repair_json's ensure_ascii and indent give json.dumps's text."""
    rng = random.Random(1000 + seed)
    for _ in range(50):
        value = random_value(rng)
        written = json.dumps(value, ensure_ascii=False)
        assert toolfix.repair_json(written) == json.dumps(value)
        assert toolfix.repair_json(written, ensure_ascii=False) == written
        for indent in (2, "\t"):
            assert toolfix.repair_json(written, indent=indent) == json.dumps(value, indent=indent)
