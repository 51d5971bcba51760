"""A forward proxy, to loopback hosts only (127.0.0.1, ::1, localhost; anything else gets 403).

    CONNECT host:port               a tunnel: 200, then bytes are relayed both ways until either side closes.
                                    Recorded under "tunnels" in the statistics.
    <METHOD> http://host:port/path  an absolute-form request (as curl sends plain http through a proxy): the
                                    request goes on in origin form with Connection: close and without the Proxy-*
                                    headers, and the answer comes back byte for byte. Recorded under "forwarded"
                                    in the statistics.

Proxy options
    --connect-ports P,Q  CONNECT only to these ports (403 otherwise), as a stock squid allows only TLS ports
    --proxy-auth U:P     CONNECT and absolute-form requests need `Proxy-Authorization: Basic base64(U:P)` (407)
"""

import base64
import select
import socket
import urllib.parse

from generator import BLOCK

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def relay(one, other):
    """Copies bytes both ways until either side closes or fails (a proxy tunnel)."""
    peers = {one: other, other: one}
    try:
        while True:
            readable, _, _ = select.select(list(peers), [], [])
            for source in readable:
                data = source.recv(BLOCK)
                if not data:
                    return
                peers[source].sendall(data)
    except OSError:
        return


class Proxy:
    """The handler's part that acts as a forward proxy."""

    def do_CONNECT(self):
        self.entry = None
        host, _, port = self.path.rpartition(":")
        host = host.strip("[]")
        tunnel = {"target": self.path, "proxy_authorization": self.headers.get("Proxy-Authorization")}
        if not self.proxy_authorized():
            tunnel["status"] = 407
            self.server.stats.add_tunnel(tunnel)
            return self.reply_text(407, None, {"Proxy-Authenticate": 'Basic realm="test"'})
        if host not in LOOPBACK_HOSTS or not port.isdigit():
            tunnel["status"] = 403
            self.server.stats.add_tunnel(tunnel)
            return self.reply_text(403, "this proxy tunnels to loopback only")
        if self.server.connect_ports is not None and int(port) not in self.server.connect_ports:
            tunnel["status"] = 403
            self.server.stats.add_tunnel(tunnel)
            return self.reply_text(403, f"CONNECT to port {port} is not allowed")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=10)
        except OSError as error:
            tunnel["status"] = 502
            self.server.stats.add_tunnel(tunnel)
            return self.reply_text(502, f"cannot reach {self.path}: {error}")
        tunnel["status"] = 200
        self.server.stats.add_tunnel(tunnel)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        with upstream:
            upstream.settimeout(None)
            relay(self.connection, upstream)

    def proxy_authorized(self):
        if self.server.proxy_auth is None:
            return True
        expected = "Basic " + base64.b64encode(self.server.proxy_auth.encode()).decode()
        return self.headers.get("Proxy-Authorization") == expected

    def forward(self):
        """An absolute-form request: passed on to a loopback server in origin form, its answer relayed raw."""
        self.entry = None
        self.close_connection = True
        split = urllib.parse.urlsplit(self.path)
        request = {"method": self.command, "target": self.path,
                   "proxy_authorization": self.headers.get("Proxy-Authorization"),
                   "authorization": self.headers.get("Authorization")}
        if not self.proxy_authorized():
            request["status"] = 407
            self.server.stats.add_forwarded(request)
            return self.reply_text(407, None, {"Proxy-Authenticate": 'Basic realm="test"'})
        if split.scheme != "http" or split.hostname not in LOOPBACK_HOSTS:
            request["status"] = 403
            self.server.stats.add_forwarded(request)
            return self.reply_text(403, "this proxy forwards to loopback only")
        try:
            upstream = socket.create_connection((split.hostname, split.port or 80), timeout=10)
        except OSError as error:
            request["status"] = 502
            self.server.stats.add_forwarded(request)
            return self.reply_text(502, f"cannot reach {split.netloc}: {error}")
        request["status"] = 0  # relayed: the origin's status is in its own statistics
        self.server.stats.add_forwarded(request)
        target = split.path or "/"
        if split.query:
            target += "?" + split.query
        lines = [f"{self.command} {target} HTTP/1.1"]
        for name, value in self.headers.items():
            if name.lower() not in ("proxy-authorization", "proxy-connection", "connection", "keep-alive"):
                lines.append(f"{name}: {value}")
        lines.append("Connection: close")
        with upstream:
            upstream.settimeout(None)
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            remaining = int(self.headers.get("Content-Length") or 0)
            while remaining > 0:
                data = self.rfile.read(min(BLOCK, remaining))
                if not data:
                    return
                upstream.sendall(data)
                remaining -= len(data)
            try:
                while True:
                    data = upstream.recv(BLOCK)
                    if not data:
                        return
                    self.connection.sendall(data)
            except OSError:
                return
