"""The Python package's speed, on the realistic workloads of scripts/bench (not a timed
test: run it by hand, on a quiet machine, and quote the figures with the command).

    bash scripts/python-bench.sh

1. `toolfix.loads` vs `json_repair.loads` vs `fast_json_repair.loads` on the 10,000 damaged
   tool-call arguments (calls_damaged.json), per call, in one run, each checked against
   the intended values (calls_expected.json).
2. `ToolSet.repair_call` from Python vs the same calls in Rust alone, on the 10,000
   schema-damaged calls (schema_calls_damaged.json against schemas.json): the binding's
   overhead per call.
"""

import argparse
import json
import pathlib
import time

import fast_json_repair
import json_repair

import toolfix
from toolfix import _toolfix


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def drain(results):
    """Run a generator to its end, keeping nothing (as the Rust loops drop each result)."""
    for _ in results:
        pass


def best(fn, repeat):
    """The best of `repeat` runs of fn(), in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def correct(load, texts, expected):
    ok = 0
    for text, want in zip(texts, expected):
        try:
            ok += same(load(text), want)
        except Exception:  # noqa: BLE001 - a failure is an incorrect answer
            pass
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", type=pathlib.Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    texts = json.loads((args.inputs / "calls_damaged.json").read_text())
    expected = json.loads((args.inputs / "calls_expected.json").read_text())
    n = len(texts)

    print(f"loads on {n} damaged calls (best of {args.repeat} runs), correct against calls_expected.json")
    loaders = {
        "toolfix.loads": toolfix.loads,
        "fast_json_repair.loads": fast_json_repair.loads,
        "json_repair.loads": json_repair.loads,
    }
    per_call = {}
    for name, load in loaders.items():
        ok = correct(load, texts, expected)
        repeat = args.repeat if name != "json_repair.loads" else max(1, args.repeat // 2)
        seconds = best(lambda: drain(load(t) for t in texts), repeat)
        per_call[name] = seconds / n * 1e6
        print(f"  {name:24} {per_call[name]:8.2f} µs/call   {ok}/{n} correct ({100 * ok / n:.2f}%)")
    salvage = min(_toolfix._time_salvage(texts, 1) for _ in range(args.repeat)) / n * 1e6
    print(f"  (toolfix salvage in Rust alone: {salvage:.2f} µs/call; value conversion and call: {per_call['toolfix.loads'] - salvage:.2f} µs)")
    print(f"  toolfix.loads is {per_call['json_repair.loads'] / per_call['toolfix.loads']:.1f}x faster than json_repair.loads, "
          f"{per_call['fast_json_repair.loads'] / per_call['toolfix.loads']:.2f}x faster than fast_json_repair.loads")

    schemas = json.loads((args.inputs / "schemas.json").read_text())
    calls = [(f"t{i}", text) for i, text in json.loads((args.inputs / "schema_calls_damaged.json").read_text())]
    tools = toolfix.ToolSet([{"name": f"t{i}", "parameters": s} for i, s in enumerate(schemas)])
    ok = sum(same(tools.repair_call(name, text).arguments, want) for (name, text), want in zip(calls, expected))
    rust = min(_toolfix._time_repair_calls(tools, calls, 1) for _ in range(args.repeat)) / len(calls) * 1e6
    py = best(lambda: drain(tools.repair_call(name, text) for name, text in calls), args.repeat) / len(calls) * 1e6
    py_args = best(lambda: drain(tools.repair_call(name, text).arguments for name, text in calls), args.repeat) / len(calls) * 1e6
    print(f"\nToolSet.repair_call on {len(calls)} schema-damaged calls (best of {args.repeat} runs), {ok}/{len(calls)} correct")
    print(f"  Rust alone                     {rust:8.2f} µs/call")
    print(f"  Python repair_call             {py:8.2f} µs/call   overhead {py - rust:.2f} µs")
    print(f"  Python repair_call().arguments {py_args:8.2f} µs/call   overhead {py_args - rust:.2f} µs")


if __name__ == "__main__":
    main()
