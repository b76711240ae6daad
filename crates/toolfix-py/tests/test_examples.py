"""Each runnable example in crates/toolfix-py/examples runs and prints what its docstring
promises."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = {
    "basics.py": ["{'city': 'Paris', 'days': 3}", "get_weather {'city': 'Paris', 'days': 3} ['coerced_scalar']", "False The call to `transfer` was refused"],
    "pydantic_ai_agent.py": ["Done: sunny in Paris for 3 days"],
    "openai_agents_agent.py": ["sunny in Paris for 3 days", "It is sunny."],
    "langchain_agent.py": ["sunny in Paris for 3 days", "It is sunny."],
    "litellm_proxy_hook.py": ['get_weather {"city": "Paris", "days": 3}'],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_AGENTS_DISABLE_TRACING="1", PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, str(ROOT / "crates/toolfix-py/examples" / name)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    for line in EXAMPLES[name]:
        assert line in done.stdout, done.stdout
