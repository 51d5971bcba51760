"""Broken and malicious answers, written raw, for the tests of what hauld refuses.

Hostile (GET /hostile/<name>, no faults applied; each closes the connection after its answer)
    bad-status        a status code of 20 digits
    garbage           bytes that are not HTTP
    endless-headers   a status line, then header lines without end (until the client leaves, at most 64 MiB)
    huge-length       200 with Content-Length 99999999999999999999999, then 10 bytes
    negative-length   200 with Content-Length -5
    absurd-range      206 with Content-Range bytes 0-99999999999999999999/99999999999999999999999
    max-range         206 with Content-Range bytes 9223372036854775806-9223372036854775806/9223372036854775807
    bad-chunk         chunked, with a chunk size of 21 hex digits
    nul-header        a header whose value holds a NUL byte, then a proper 10-byte body
    huge-retry-after  503 with Retry-After 99999999999999999999999
    redirect          302 with `Location:` the query parameter to, as given (so any target at all)
"""

from errors import Reply

# The answers that are the same every time.
ANSWERS = {
    "bad-status": b"HTTP/1.1 99999999999999999999 Nope\r\nContent-Length: 0\r\n\r\n",
    "garbage": b"\x00\xff\xfeNOT HTTP AT ALL\r\n\r\n" + bytes(range(256)),
    "huge-length": b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n0123456789",
    "negative-length": b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n01234",
    "absurd-range": b"HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n"
                    b"Content-Range: bytes 0-99999999999999999999/99999999999999999999999\r\n\r\n0123456789",
    "max-range": b"HTTP/1.1 206 Partial Content\r\nContent-Length: 1\r\nContent-Range: "
                 b"bytes 9223372036854775806-9223372036854775806/9223372036854775807\r\n\r\n0",
    "bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\nab\r\n",
    "nul-header": b"HTTP/1.1 200 OK\r\nX-Odd: a\x00b\r\nContent-Length: 10\r\n\r\n0123456789",
    "huge-retry-after": b"HTTP/1.1 503 Busy\r\nRetry-After: 99999999999999999999999\r\n"
                        b"Content-Length: 0\r\n\r\n",
}


class Hostile:
    """The handler's part that answers /hostile/<name>."""

    def hostile(self, name):
        """A broken or malicious answer, written raw; the connection closes after it."""
        self.close_connection = True
        self.record_status(0)
        try:
            if name == "redirect":
                location = self.query.get("to", "").encode("utf-8", "surrogateescape")
                self.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\nContent-Length: 0\r\n\r\n")
            elif name == "endless-headers":
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                line = b"X-Padding: " + b"a" * 1000 + b"\r\n"
                for _ in range(64 * 1024):
                    self.wfile.write(line)
            elif name in ANSWERS:
                self.wfile.write(ANSWERS[name])
            else:
                raise Reply(404, f"no hostile answer {name!r}")
            self.wfile.flush()
        except (ConnectionError, BrokenPipeError, TimeoutError, OSError):
            pass
