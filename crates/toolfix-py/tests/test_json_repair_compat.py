"""toolfix.loads as a drop-in for json_repair.loads.

1. Every case of json_repair's own test suite (the repository's copy,
   crates/toolfix/tests/fixtures/json/json_repair.jsonl, from ../shared/corpus/json): toolfix
   gives json_repair's expected value, except the cases listed with a reason in
   crates/toolfix/tests/json_deviations.md (the library's deliberate differences, which
   the Rust corpus test checks the same way). A listed case that starts to pass fails too,
   so the list stays true.
2. The cases of json_repair's strict mode, through `strict=True`.
3. Each difference of the Python functions documented in docs/python.md, checked against
   the installed json_repair, so the documentation states what both libraries do.
"""

import json
import math

import json_repair
import pytest

import toolfix
from conftest import ROOT

FIXTURES = ROOT / "crates/toolfix/tests/fixtures/json/json_repair.jsonl"
DEVIATIONS = ROOT / "crates/toolfix/tests/json_deviations.md"


def cases():
    return [json.loads(line) for line in FIXTURES.read_text().splitlines() if line.strip()]


def deviations():
    ids = set()
    for line in DEVIATIONS.read_text().splitlines():
        if line.startswith("- `"):
            ids.add(line[3:].split("`")[0])
    return ids


def same(a, b):
    """Values equal as the Rust corpus test judges them: numbers by value, `True != 1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def passes(case) -> bool:
    try:
        got = toolfix.loads(case["input"])
    except toolfix.RepairError:
        return case.get("expect_error") is True
    if case.get("expect_error") is True:
        return False
    wanted = [case["expected"], *case.get("alternatives", [])]
    return any(same(got, w) for w in wanted)


def test_json_repair_suite():
    listed = deviations()
    plain = [c for c in cases() if not c.get("options")]
    assert len(plain) > 250
    unexpected = [c["id"] for c in plain if not passes(c) and c["id"] not in listed]
    stale = [c["id"] for c in plain if passes(c) and c["id"] in listed]
    assert unexpected == [], f"fail without a listed reason: {unexpected}"
    assert stale == [], f"listed as a difference but pass now (update json_deviations.md): {stale}"


# json_repair's strict-mode cases that toolfix accepts in strict mode, with the reason.
STRICT_ACCEPTED = {
    "json_repair:0286": "an empty key is valid JSON: nothing is repaired",
    "json_repair:0290": "JSON written with escaped quotes unescapes one way only",
    "json_repair:0291": "the doubled quotes are kept as the string they spell",
    "json_repair:0292": "the quotes are kept as the string they spell",
}


def test_json_repair_strict_cases():
    strict = [c for c in cases() if (c.get("options") or {}).get("strict")]
    assert len(strict) == 17
    for case in strict:
        try:
            toolfix.loads(case["input"], strict=True)
            raised = False
        except toolfix.RepairError:
            raised = True
        assert raised == (case["id"] not in STRICT_ACCEPTED), case["id"]


# The documented differences (docs/python.md), each checked on both libraries.


def test_no_json_raises_instead_of_returning_an_empty_string():
    for text in ["", "   ", "no json here"]:
        assert json_repair.loads(text) == ""
        with pytest.raises(toolfix.RepairError):
            toolfix.loads(text)
    assert json_repair.repair_json("no json here") == ""
    with pytest.raises(toolfix.RepairError):
        toolfix.repair_json("no json here")


def test_a_cut_literal_is_never_completed_or_kept_as_text():
    for text, key, cut in [('{"a": 1, "ok": tr', "ok", "tr"), ('{"ok": fal', "ok", "fal"), ('{"v": nu', "v", "nu")]:
        assert json_repair.loads(text)[key] == cut
        ours, log = toolfix.loads(text, logging=True)
        assert key not in ours  # the member is left out: its value was never written
        assert any(e["kind"] == "uncertain_literal" for e in log)


def test_a_cut_number_is_cut_back_and_reported():
    assert json_repair.loads('{"a": 1.') == {"a": 1.0}
    ours, log = toolfix.loads('{"a": 1.', logging=True)
    assert ours == {"a": 1} and type(ours["a"]) is int
    assert any(e["kind"] == "uncertain_number" for e in log)


def test_a_missing_value_is_null():
    assert json_repair.loads('{"key": , "k2": 1}') == {"key": "", "k2": 1}
    assert toolfix.loads('{"key": , "k2": 1}') == {"key": None, "k2": 1}


def test_js_literals_are_null():
    # json_repair: float NaN/inf when Python's json module reads the text, else strings.
    assert math.isnan(json_repair.loads('{"a": NaN}')["a"])
    assert json_repair.loads('{"a": NaN, "c": undefined}') == {"a": "NaN", "c": "undefined"}
    assert toolfix.loads('{"a": NaN, "b": Infinity, "c": undefined}') == {"a": None, "b": None, "c": None}


def test_string_content_is_kept():
    text = '```json\n{"a": "x\n"}\n```'
    assert json_repair.loads(text) == {"a": "x"}
    assert toolfix.loads(text) == {"a": "x\n"}


def test_repair_json_keeps_the_text_as_written():
    text = "{'n': 1.50, 'e': 1E5}"
    assert json_repair.repair_json(text) == '{"n": 1.5, "e": 100000.0}'
    assert toolfix.repair_json(text) == '{"n": 1.50, "e": 1E5}'
    valid = '{"a":1,"b":[1,2]}'
    assert json_repair.repair_json(valid) == '{"a": 1, "b": [1, 2]}'
    assert toolfix.repair_json(valid) == valid


def test_input_over_the_cap_raises():
    big = '{"a": "' + "x" * (256 * 1024) + '"}'
    assert json_repair.loads(big) == {"a": "x" * (256 * 1024)}
    with pytest.raises(toolfix.RepairError):
        toolfix.loads(big)
    assert toolfix.loads(big, max_input_bytes=1 << 20) == {"a": "x" * (256 * 1024)}
