"""One connection's requests: routes each to the part that answers it, and the small replies they share.

The parts are the mixins of `Handler`, one module each: `Origin` (content, ranges, validators, redirects),
`Faults` (faults asked for in the query, and sending a body with them), `Proxy` (CONNECT and absolute-form
requests), `Hostile` (broken answers) and `Uploads` (request bodies).
"""

import http.server
import socket
import sys
import urllib.parse

from errors import Aborted, ClientGone, Reply
from faults import Faults
from hostile import Hostile
from origin import Origin
from proxy import Proxy
from uploads import Uploads


class Handler(Origin, Faults, Proxy, Hostile, Uploads, http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "HaulTestHTTP/1"

    def setup(self):
        super().setup()
        self.connection_id = next(self.server.connections)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write(f"[{self.connection_id}] {self.address_string()} {format % args}\n")
            sys.stderr.flush()

    # -- dispatch --

    def do_GET(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def dispatch(self):
        self.entry = None
        target = self.path
        if target.lower().startswith("http://") or target.lower().startswith("https://"):
            return self.forward()
        split = urllib.parse.urlsplit(target)
        self.route = urllib.parse.unquote(split.path)
        parsed = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        self.query = {name: values[-1] for name, values in parsed.items()}
        try:
            if self.route == "/stats" and self.command in ("GET", "HEAD"):
                self.drain_request_body()
                return self.reply_bytes(200, self.server.stats.snapshot(), "application/json")
            if self.route == "/stats/reset" and self.command == "POST":
                self.drain_request_body()
                self.server.stats.reset()
                return self.reply_bytes(204, b"", None)
            self.entry = self.server.stats.begin_request(
                target, self.command, self.connection_id, self.headers.get("Range"), self.headers.get("If-Range"),
                self.headers.get("Authorization"), self.headers.get("Cookie"))
            if self.route.startswith("/redirect/"):
                self.drain_request_body()
                return self.redirect()
            if self.route.startswith("/hostile/"):
                self.drain_request_body()
                return self.hostile(self.route[len("/hostile/"):])
            if self.command in ("PUT", "POST"):
                if not self.route.startswith("/upload/"):
                    self.drain_request_body()
                    raise Reply(405, "method not allowed")
                return self.upload()
            self.drain_request_body()
            self.apply_request_faults()
            if self.route.startswith("/sha256/"):
                return self.digest(self.route[len("/sha256"):])
            self.serve(self.representation(self.route))
        except Reply as reply:
            self.reply_text(reply.status, reply.text, reply.headers)
        except Aborted:
            self.close_connection = True
        except (ClientGone, ConnectionError, BrokenPipeError, TimeoutError):
            self.close_connection = True
            if self.entry is not None and self.entry["outcome"] in ("pending", "stalling"):
                self.server.stats.update(self.entry, outcome="client-closed")
        except ValueError as error:
            self.reply_text(400, f"bad request: {error}")
        finally:
            if self.entry is not None:
                self.server.stats.end_request()

    # -- helpers --

    def param(self, name, convert=str, default=None):
        if name not in self.query:
            return default
        try:
            return convert(self.query[name])
        except ValueError:
            raise Reply(400, f"bad value for {name}: {self.query[name]!r}")

    def record_status(self, status, complete=True):
        if self.entry is not None:
            self.server.stats.update(self.entry, status=status, outcome="complete" if complete else "pending")

    def reply_text(self, status, text=None, headers=None):
        if text is None:
            text = f"{status} {self.responses.get(status, ('',))[0]}".strip()
        body = b"" if status in (204, 304) or status < 200 else (text + "\n").encode()
        self.reply_bytes(status, body, "text/plain; charset=utf-8", headers)

    def reply_bytes(self, status, body, content_type, headers=None):
        self.record_status(status)
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status not in (204, 304) and status >= 200:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
