"""ToolfixModel around the SDK's real OpenAI models, Chat Completions and Responses alike,
talking to a fake OpenAI server on loopback (the official `openai` client parses its
answers): the model's broken call reaches the tool repaired."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool
from openai import AsyncOpenAI

from toolfix.hooks.openai_agents import ToolfixModel

BROKEN = "{'city': 'Paris', 'days': '3',}"


def chat(turn):
    if turn == 0:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "GetWeather", "arguments": BROKEN}}]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": "Sunny."}, "stop"
    return {"id": f"chatcmpl-{turn}", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def responses(turn):
    if turn == 0:
        output = [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "GetWeather", "arguments": BROKEN, "status": "completed"}]
    else:
        output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]}]
    return {"id": f"resp_{turn}", "object": "response", "created_at": 0, "model": "m", "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


@pytest.fixture
def server():
    turns = {"n": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = chat(turns["n"]) if self.path.endswith("/chat/completions") else responses(turns["n"])
            turns["n"] += 1
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("kind", ["chat_completions", "responses"])
def test_real_models_get_repaired_calls(server, kind):
    ran = []

    @function_tool
    def get_weather(city: str, days: int = 1) -> str:
        """Weather forecast for a city."""
        ran.append((city, days))
        return "sunny"

    client = AsyncOpenAI(base_url=server, api_key="unused", max_retries=0)
    inner = OpenAIChatCompletionsModel("m", client) if kind == "chat_completions" else OpenAIResponsesModel("m", client)
    result = Runner.run_sync(Agent(name="a", tools=[get_weather], model=ToolfixModel(inner)), "weather?")
    assert ran == [("Paris", 3)]
    assert result.final_output == "Sunny."
