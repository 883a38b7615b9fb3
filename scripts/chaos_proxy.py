#!/usr/bin/env python3
"""An HTTP proxy in front of a local S3 server that answers errors while told to.

Usage: chaos_proxy.py LISTEN_PORT UPSTREAM_PORT FAIL_FILE

LISTEN_PORT 0 takes a free port; the first line printed names it ("listening on 127.0.0.1:P").

Forwards every request to 127.0.0.1:UPSTREAM_PORT unchanged. While FAIL_FILE exists it answers
every request with `503 Slow Down` (the error S3 gives under load, which clients retry)
instead, and counts them. Loopback only. Used by scripts/chaos.sh; stops when killed.
"""
import http.client
import http.server
import os
import socketserver
import sys

LISTEN, UPSTREAM, FAIL = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ERROR_BODY = b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>chaos: failing on purpose</Message></Error>'
failed = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        global failed
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if os.path.exists(FAIL):
            failed += 1
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(ERROR_BODY)))
            self.end_headers()
            self.wfile.write(ERROR_BODY)
            with open(FAIL + ".count", "w") as f:
                f.write(str(failed))
            return
        conn = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        # (a HEAD answer carries the object's length, with no body)
        self.send_header("Content-Length", resp.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    server = Server(("127.0.0.1", LISTEN), Handler)
    # LISTEN_PORT 0 binds a free port: say which, for the caller to read
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
