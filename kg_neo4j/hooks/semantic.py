"""Recall by meaning without loading an embedding model: ask a running ``kg-neo4j serve --transport
http`` (``KG_NEO4J_HOOK_SEARCH_URL``) its ``search_memory`` over plain JSON-RPC POSTs
(initialize, notifications/initialized, tools/call), with the bearer token ``KG_NEO4J_AUTH_TOKEN``.
The server answers a POST as JSON or as a server-sent event stream; both are read."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

PROTOCOL_VERSION = "2025-06-18"
#: search_memory's longest query (models.MAX_QUERY_CHARS).
QUERY_CHARS = 1024


class Client:
    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.session: str | None = None

    def _post(self, message: dict[str, Any]) -> dict[str, Any] | None:
        req = urllib.request.Request(
            self.url, data=json.dumps(message).encode(), headers=self.headers, method="POST"
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - a configured http(s) URL
            sid = resp.headers.get("mcp-session-id")
            if sid and not self.session:
                self.session = sid
                self.headers["Mcp-Session-Id"] = sid
            body = resp.read().decode()
            kind = resp.headers.get("content-type", "")
        if "id" not in message or not body.strip():
            return None
        if kind.startswith("text/event-stream"):
            for line in body.splitlines():
                if line.startswith("data:"):
                    data = json.loads(line[5:].strip())
                    if isinstance(data, dict) and data.get("id") == message["id"]:
                        return data
            raise ValueError("no answer in the event stream")
        answer = json.loads(body)
        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object")
        return answer

    def open(self) -> None:
        self._post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "kg-neo4j-hook", "version": "1"},
                },
            }
        )
        self.headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def search(self, query: str, limit: int) -> list[str]:
        """The entity names search_memory answers for ``query``, best first."""
        answer = (
            self._post(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {
                        "name": "search_memory",
                        "arguments": {"query": query[:QUERY_CHARS], "limit": limit},
                    },
                }
            )
            or {}
        )
        result = answer.get("result") or {}
        if result.get("isError") or "error" in answer:
            raise ValueError(f"search_memory failed: {answer.get('error') or result.get('content')}")
        data = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        return list(dict.fromkeys(h["name"] for h in data.get("hits", [])))

    def close(self) -> None:
        """End the server's session (it would otherwise live until the server stops)."""
        if not self.session:
            return
        req = urllib.request.Request(self.url, headers=self.headers, method="DELETE")
        with urllib.request.urlopen(req, timeout=self.timeout):  # noqa: S310
            pass


def search_by_meaning(
    url: str, token: str | None, query: str, limit: int, timeout: float
) -> tuple[list[str], Client]:
    """Names search_memory finds for ``query`` on the server at ``url``, and the client (to close later)."""
    client = Client(url, token, timeout)
    client.open()
    return client.search(query, limit), client
