"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 for tests: every request is recorded and
answered by the test's ``respond(path, body) -> (status, payload)``. Error answers carry
``retry-after-ms: 1``, so the client's own retries run without real backoff."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Respond = Callable[[str, dict], tuple[int, dict]]


def error(status: int, message: str) -> tuple[int, dict]:
    return status, {"error": {"message": message, "type": "test", "code": None}}


class StubOpenAI:
    def __init__(self, respond: Respond) -> None:
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # the model list, which graphmem asks for before a write
                raw = json.dumps({"object": "list", "data": []}).encode()
                self.send_response(200 if self.path.endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "body": body})
                status, payload = respond(self.path, body)
                raw = json.dumps(payload).encode()
                self.send_response(status)
                if status >= 400:
                    self.send_header("retry-after-ms", "1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
