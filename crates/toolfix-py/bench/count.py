"""Run one loader over the first N damaged calls (for instruction counts under callgrind:
scripts/python-bench.sh --instructions runs it with N and with 1; the difference divided by
N - 1 is the cost per call, interpreter start-up and imports cancelled out)."""

import json
import sys

which, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = json.loads(open(path).read())[:n]
if which == "toolfix":
    import toolfix

    load = toolfix.loads
elif which == "fast_json_repair":
    import fast_json_repair

    load = fast_json_repair.loads
elif which == "json_repair":
    import json_repair

    load = json_repair.loads
elif which == "salvage":
    from toolfix import _toolfix

    _toolfix._time_salvage(texts, 1)
    texts = []
elif which == "repair_json":
    import toolfix

    load = toolfix.repair_json
elif which == "toolfix_valid":
    import toolfix

    load = toolfix.loads
    texts = json.loads(open(path.replace("calls_damaged", "calls_valid")).read())[:n]
elif which in ("repair_call", "repair_call_arguments", "repair_rust", "valid_call", "valid_rust"):
    import toolfix
    from toolfix import _toolfix

    base = path.rsplit("/", 1)[0]
    schemas = json.loads(open(base + "/schemas.json").read())
    tools = toolfix.ToolSet([{"name": f"t{i}", "parameters": s} for i, s in enumerate(schemas)])
    source = "/schema_calls_valid.json" if which.startswith("valid") else "/schema_calls_damaged.json"
    calls = [(f"t{i}", t) for i, t in json.loads(open(base + source).read())[:n]]
    if which in ("repair_rust", "valid_rust"):
        _toolfix._time_repair_calls(tools, calls, 1)
    elif which in ("repair_call", "valid_call"):
        for name, t in calls:
            tools.repair_call(name, t)
    else:
        for name, t in calls:
            tools.repair_call(name, t).arguments
    texts = []
elif which == "json":
    load = json.loads
    texts = json.loads(open(path.replace("calls_damaged", "calls_valid")).read())[:n]
for t in texts:
    load(t)
