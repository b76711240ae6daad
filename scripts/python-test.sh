#!/usr/bin/env bash
# The Python package's tests: build and install it (scripts/python-package.sh), then run
# pytest on crates/toolfix-py/tests (API, json_repair compatibility, hostile input, and
# each framework hook against the real framework with a fake model). Offline: nothing
# leaves the machine. Arguments go to pytest (e.g. `-k litellm`).
set -euo pipefail
python=$(bash "$(dirname "$0")/python-package.sh")
source "$(dirname "$0")/common.sh"
# litellm reads its model price list from the network at import unless told not to; the
# Agents SDK exports traces to OpenAI unless tracing is off.
export LITELLM_LOCAL_MODEL_COST_MAP=True OPENAI_AGENTS_DISABLE_TRACING=1 LANGSMITH_TRACING=false
exec "$python" -m pytest -q -p no:cacheprovider crates/toolfix-py/tests "$@"
