"""Faults a test asks for in the query, and sending a body with them.

Faults (query parameters, combinable, on any request except /stats, /redirect and /hostile)
    delay=SEC            wait before answering
    status=CODE          always answer CODE with a small text body
    fail=CODE            answer CODE for the first fail-times=K (default 1) requests, then serve normally;
    retry-after=V        ... with `Retry-After: V` on those failures
    ignore-range=1       ignore Range (200 with the whole body; no Accept-Ranges unless accept-ranges=V)
    accept-ranges=V      send `Accept-Ranges: V` (empty: send none)
    range-cap=N          a 206 carries at most N bytes (Content-Range ends early), as servers that cap ranges do
    etag-changes=1       new ETag and Last-Modified on every request
    throttle=BPS         pace the body at BPS bytes per second
    reset-after=N        send N body bytes, then reset the connection (RST: SO_LINGER 0), on the first
                         reset-times=K (default 1) requests that get that far. Before the reset the server
                         waits until the client's kernel has acknowledged all N bytes, then reset-delay=SEC
                         (default 0.1), so the client receives exactly N bytes. For uploads: reset after
                         receiving N body bytes.
    close-after=N        send N body bytes, then close cleanly (FIN) on the first close-times=K (default 1)
    stall-after=N        send N body bytes, then send nothing for stall-seconds=SEC (default 3600), then the
                         rest, on the first stall-times=K (default 1) requests that get that far
    chunked=1            Transfer-Encoding: chunked instead of Content-Length
    no-length=1          neither: the body ends when the connection closes
    need-auth=U:P        answer 401 (WWW-Authenticate: Basic) unless `Authorization: Basic base64(U:P)` came
    id=ANYTHING          ignored, makes the key unique
    N counts bytes of this response's body (after Range), not offsets in the file; N at or beyond the body's
    end strikes after its last byte (before a chunked terminator or the closing of a no-length body). Counters for
    fail-times, reset-times, close-times and stall-times are kept per (method, request target), and each counts only
    the requests that reach that step (fail=503&reset-after=10: request 1 fails, 2 is reset, 3 succeeds).
"""

import base64
import fcntl
import select
import socket
import ssl
import struct
import termios
import time

from errors import Aborted, ClientGone, Reply


# Linux's TCP states (linux/tcp_states.h), the first byte of TCP_INFO.
TCP_CLOSE = 7
TCP_CLOSE_WAIT = 8


class Faults:
    """The handler's part that applies the faults of the query."""

    def apply_request_faults(self):
        delay = self.param("delay", float)
        if delay:
            time.sleep(delay)
        need_auth = self.param("need-auth")
        if need_auth is not None:
            expected = "Basic " + base64.b64encode(need_auth.encode()).decode()
            if self.headers.get("Authorization") != expected:
                raise Reply(401, "credentials needed", {"WWW-Authenticate": 'Basic realm="test"'})
        status = self.param("status", int)
        if status is not None:
            raise Reply(status, f"status {status} as asked")
        fail = self.param("fail", int)
        if fail is not None:
            if self.server.stats.take(self.command, self.path, "fail") <= self.param("fail-times", int, 1):
                headers = {}
                retry_after = self.param("retry-after")
                if retry_after is not None:
                    headers["Retry-After"] = retry_after
                raise Reply(fail, f"failure {fail} as asked", headers)

    def send_raw(self, data, count, total):
        """Writes all of `data`; counts it as content when `count`. Select + MSG_DONTWAIT, so that the time
        between a send() and its accounting is tiny and /stats can wait it out."""
        view = memoryview(data)
        stats = self.server.stats
        while len(view):
            try:
                _, writable, _ = select.select([], [self.connection], [], 1.0)
            except (OSError, ValueError):
                raise ClientGone()
            if not writable:
                continue
            stats.begin_send()
            written = 0
            try:
                if isinstance(self.connection, ssl.SSLSocket):
                    written = self.connection.send(view)  # TLS takes no flags; select said it is writable
                else:
                    written = self.connection.send(view, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            except (BlockingIOError, ssl.SSLWantWriteError):
                pass
            except OSError:
                raise ClientGone()
            finally:
                stats.end_send(self.path, self.entry, written if count else 0, total)
            view = view[written:]

    def fault_point(self, name):
        """The byte count after which fault `name` strikes on this request, or None."""
        after = self.param(f"{name}-after", int)
        if after is None:
            return None
        times = self.param(f"{name}-times", int, 1)
        if self.server.stats.take(self.command, self.path, name) > times:
            return None
        return after

    def body_plan(self):
        """Reads (and checks) every body fault before the headers go out."""
        rate = self.param("throttle", int)
        plan = {
            "rate": rate if rate and rate > 0 else None,
            "stall_seconds": self.param("stall-seconds", float, 3600.0),
            "reset_delay": self.param("reset-delay", float, 0.1),
        }
        for name in ("reset", "close", "stall"):
            self.param(f"{name}-times", int)
            plan[name] = self.fault_point(name)
        return plan

    def send_body(self, chunks, total, chunked, plan):
        reset_at, close_at, stall_at, rate = plan["reset"], plan["close"], plan["stall"], plan["rate"]
        paced_from = time.monotonic()
        sent = 0

        def cuts():
            nonlocal stall_at, paced_from
            if reset_at is not None and sent >= min(reset_at, total):
                self.abort(reset=True, delay=plan["reset_delay"])
            if close_at is not None and sent >= min(close_at, total):
                self.abort(reset=False, delay=0)
            if stall_at is not None and sent >= min(stall_at, total):
                stall_at = None
                paced_from += self.stall(plan["stall_seconds"])

        for piece in chunks:
            view = memoryview(piece)
            while len(view):
                cuts()
                limit = len(view)
                for point in (reset_at, close_at, stall_at):
                    if point is not None and point > sent:
                        limit = min(limit, point - sent)
                if rate is not None:
                    limit = min(limit, max(1, rate // 20))
                    due = paced_from + sent / rate
                    now = time.monotonic()
                    if due > now:
                        self.pause(due - now)
                if chunked:
                    self.send_raw(f"{limit:x}\r\n".encode(), False, total)
                self.send_raw(view[:limit], True, total)
                if chunked:
                    self.send_raw(b"\r\n", False, total)
                view = view[limit:]
                sent += limit
        cuts()
        if chunked:
            self.send_raw(b"0\r\n\r\n", False, total)
        if self.entry["outcome"] == "pending":
            self.server.stats.update(self.entry, outcome="complete")

    def wait_until_delivered(self, timeout=10.0):
        """Waits until the peer has acknowledged every byte sent (SIOCOUTQ is 0), so that a reset, which
        discards what is still queued, cannot take back bytes already counted as sent."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                queued = struct.unpack("i", fcntl.ioctl(self.connection.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
            except OSError:
                return
            if queued == 0:
                return
            time.sleep(0.005)

    def abort(self, reset, delay):
        if reset:
            self.wait_until_delivered()
            time.sleep(delay)
            self.server.stats.update(self.entry, outcome="reset")
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            self.server.stats.update(self.entry, outcome="closed")
            try:
                self.connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.connection.close()
        raise Aborted()

    def stall(self, seconds):
        """Sends nothing for `seconds`, or until the client goes away. Returns the time spent."""
        self.server.stats.update(self.entry, outcome="stalling")
        began = time.monotonic()
        self.pause(seconds)
        self.server.stats.update(self.entry, outcome="pending")
        return time.monotonic() - began

    def pause(self, seconds):
        """Sends nothing for `seconds`; raises ClientGone as soon as the client closes the connection, as nginx
        notices it, rather than at the next write: the statistics' in-flight count (`most_in_flight`) then never
        holds a paced response its client has given up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                readable, _, _ = select.select([self.connection], [], [], left)
            except (OSError, ValueError):
                raise ClientGone()
            if readable:
                if self.client_left():
                    raise ClientGone()
                time.sleep(min(left, 0.05))  # pipelined data or a TLS alert: keep waiting without spinning

    def client_left(self):
        """Whether the client has closed its side (its FIN, or a reset), from the connection's TCP state: what it sent
        before (a TLS close_notify, a pipelined request) would hide the end from a peek."""
        try:
            state = self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
        except OSError:
            return True
        return state in (TCP_CLOSE, TCP_CLOSE_WAIT)
