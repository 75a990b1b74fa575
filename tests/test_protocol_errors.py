"""Every message gets the answer JSON-RPC 2.0 prescribes, over stdio and streamable HTTP, and the
server stays up after each (docs/connecting.md#protocol-errors).  Raw bytes on the wire: no SDK client, which
would refuse to send most of these."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kg_neo4j.server.app import profile_tools
from kg_neo4j.server.wire import MAX_JSON_DEPTH, check_message
from support.kg import INIT, RawStdio
from support.servers import Neo4jInfo, http_server

#: what ``serve`` lists by default (the ``default`` profile's declarations)
DEFAULT_TOOLS = len(profile_tools("default"))


def _call(rid: int, arguments: Any) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "create_entities", "arguments": arguments},
        }
    )


def _nested(depth: int) -> str:
    return _call(7, {"entities": json.loads("[" * depth + "]" * depth)})


#: (id, raw message, expected code, expected id, words the message must contain)
CASES: list[tuple[str, str, int, Any, list[str]]] = [
    ("half-object", '{"jsonrpc":"2.0","id":2,"method":"tools/li', -32700, None, ["Parse error", "not JSON"]),
    ("not-json-at-all", "hello there", -32700, None, ["Parse error"]),
    (
        "jsonrpc-1.0",
        '{"jsonrpc":"1.0","id":3,"method":"tools/list"}',
        -32600,
        3,
        ["'jsonrpc'", '"2.0"', '"1.0"'],
    ),
    ("jsonrpc-missing", '{"id":"x","method":"tools/list"}', -32600, "x", ["'jsonrpc'"]),
    ("method-missing", '{"jsonrpc":"2.0","id":4}', -32600, 4, ["'method' is missing"]),
    ("method-not-string", '{"jsonrpc":"2.0","id":5,"method":7}', -32600, 5, ["'method' must be a string"]),
    ("id-float", '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, None, ["'id'", "number"]),
    ("batch-array", '[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]', -32600, None, ["batches"]),
    ("bare-string", '"tools/list"', -32600, None, ["JSON object", "string"]),
    (
        "params-array",
        '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}',
        -32602,
        8,
        ["'params' must be an object", "array"],
    ),
    ("arguments-array", _call(9, []), -32602, 9, ["'arguments' must be an object", "array"]),
    ("arguments-string", _call(10, "x"), -32602, 10, ["'arguments' must be an object", "string"]),
    (
        "tool-name-missing",
        '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"arguments":{}}}',
        -32602,
        11,
        ["'params.name'"],
    ),
    (
        "lone-surrogate-value",
        _call(12, {"entities": [{"name": "\ud800", "entityType": "x", "observations": []}]}),
        -32602,
        12,
        ["params.arguments.entities[0].name", "surrogate", "U+D800"],
    ),
    ("lone-surrogate-key", _call(13, {"\udc00": 1}), -32602, 13, ["a key", "surrogate"]),
    ("nested-300", _nested(300), -32602, 7, [str(MAX_JSON_DEPTH), "limit"]),
    ("nested-just-over", _nested(MAX_JSON_DEPTH), -32602, 7, [str(MAX_JSON_DEPTH), "limit"]),
    (
        "nested-2000",
        '{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"x":' + "[" * 2000 + "]" * 2000 + "}}",
        -32602,
        None,
        [str(MAX_JSON_DEPTH), "limit"],
    ),
]


def _assert_error(answer: dict[str, Any], code: int, rid: Any, words: list[str]) -> None:
    assert answer.get("jsonrpc") == "2.0", answer
    assert answer.get("id") == rid, answer
    assert "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    for w in words:
        assert w in answer["error"]["message"], (w, answer)


@pytest.fixture(scope="module")
def raw_stdio(neo4j_info: Neo4jInfo) -> Iterator[RawStdio]:
    # a namespace of this run's own: test_stdio_nothing_written_by_refused_call reads all of it
    raw = RawStdio(neo4j_info, f"test-protocol-errors-{uuid.uuid4().hex[:8]}")
    raw.send(json.dumps(INIT))
    assert raw.receive()["id"] == 1
    raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield raw
    raw.close()


@pytest.mark.parametrize(("raw", "code", "rid", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_stdio_answers_and_stays_up(
    raw_stdio: RawStdio, raw: str, code: int, rid: Any, words: list[str]
) -> None:
    raw_stdio.send(raw)
    _assert_error(raw_stdio.receive(), code, rid, words)
    raw_stdio.send(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
    after = raw_stdio.receive()
    assert after["id"] == 99 and len(after["result"]["tools"]) == DEFAULT_TOOLS


def test_stdio_invalid_utf8_is_a_parse_error(raw_stdio: RawStdio) -> None:
    raw_stdio.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\xff\xfe"}')
    _assert_error(raw_stdio.receive(), -32700, None, ["not UTF-8", "0xff"])


def test_stdio_bad_notification_gets_no_answer(raw_stdio: RawStdio) -> None:
    """JSON-RPC never answers a notification, even a bad one: the next answer is the next request's."""
    raw_stdio.send('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    raw_stdio.send(json.dumps({"jsonrpc": "2.0", "id": 42, "method": "tools/list"}))
    assert raw_stdio.receive()["id"] == 42


def test_stdio_nothing_written_by_refused_call(raw_stdio: RawStdio) -> None:
    raw_stdio.send(_call(50, {"entities": [{"name": "Lone\ud800", "entityType": "x", "observations": []}]}))
    _assert_error(raw_stdio.receive(), -32602, 50, ["surrogate"])
    raw_stdio.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 51,
                "method": "tools/call",
                "params": {"name": "read_graph", "arguments": {}},
            }
        )
    )
    graph = json.loads(raw_stdio.receive()["result"]["content"][0]["text"])
    assert graph == {"entities": [], "relations": []}


@pytest.fixture(scope="module")
def http_url(neo4j_info: Neo4jInfo) -> Iterator[tuple[str, dict[str, str]]]:
    with http_server(neo4j_info, "--namespace", f"test-protocol-errors-http-{uuid.uuid4().hex[:8]}") as url:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        with httpx.Client(base_url=url, timeout=30) as client:
            r = client.post("/mcp", headers=headers, content=json.dumps(INIT))
            assert r.status_code == 200
            headers = {
                **headers,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            client.post(
                "/mcp",
                headers=headers,
                content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
        yield url, headers


def _sse_or_json(r: httpx.Response) -> dict[str, Any]:
    if r.headers["content-type"].startswith("text/event-stream"):
        data = [ln[5:].strip() for ln in r.text.splitlines() if ln.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(r.json())


@pytest.mark.parametrize(("raw", "code", "rid", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_http_answers_and_stays_up(
    http_url: tuple[str, dict[str, str]], raw: str, code: int, rid: Any, words: list[str]
) -> None:
    url, headers = http_url
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/mcp", headers=headers, content=raw.encode("utf-8", "surrogatepass"))
        assert r.status_code == 400, r.text
        assert r.headers["content-type"].startswith("application/json")
        _assert_error(r.json(), code, rid, words)
        ok = client.post(
            "/mcp", headers=headers, content=json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"})
        )
        assert ok.status_code == 200 and len(_sse_or_json(ok)["result"]["tools"]) == DEFAULT_TOOLS


def test_http_healthz_needs_no_token_and_shows_no_data(neo4j_info: Neo4jInfo) -> None:
    with http_server(neo4j_info, "--auth-token", "s3cret") as url, httpx.Client(base_url=url) as client:
        r = client.get("/healthz")
        assert r.status_code == 200 and r.json() == {"status": "ok"}
        assert client.post("/mcp", content=json.dumps(INIT)).status_code == 401


@pytest.mark.unit
@pytest.mark.parametrize(
    "raw",
    [
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":"a","result":{}}',
        _call(3, {"entities": [{"name": "😀 ok", "entityType": "x", "observations": []}]}),
        _nested(MAX_JSON_DEPTH - 5),
    ],
    ids=["request", "notification", "response", "surrogate-pair-ok", "nested-under-limit"],
)
def test_valid_messages_pass_the_check(raw: str) -> None:
    parsed, rejected = check_message(raw)
    assert rejected is None and isinstance(parsed, dict)
