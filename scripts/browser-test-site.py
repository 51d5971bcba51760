#!/usr/bin/env python3
"""A loopback web site for the browser hand-off tests (Python 3 standard library only).

Listens on 127.0.0.1, on an ephemeral port, and prints one line `PORT <n>` once it accepts connections. Runs until
SIGTERM/SIGINT or until its parent process goes away.

    browser-test-site.py --root DIR --secret TOKEN [--rate BYTES_PER_SECOND]

Pages
    GET /login               sets the cookie `session=TOKEN` (HttpOnly, Path=/) and redirects to /page
    GET /page                a page with the links #file (to /download/<name>) and #blob (a blob: URL)
    GET /download/<name>     302 to /files/<name> (the browser's final URL differs from the link's)
    GET /files/<name>        the file DIR/<name> as an attachment, named by Content-Disposition `Report <name>`
                             (filename* in UTF-8 as well), only with the cookie `session=TOKEN` and a Referer of
                             this site's /page: 403 without either. With --rate, the body is paced at that
                             many bytes per second (a browser's own download is then still running when Haul
                             answers, as it is for a file worth handing over)
    GET /requests            JSON: every request of /files/, in order: {"path", "status", "cookie" (true when
                             the session cookie came), "referer", "user_agent", "bytes"}

The name the server gives a file differs from its URL's last segment, so that a test sees who named it.
"""
import argparse
import http.server
import json
import os
import signal
import sys
import threading
import time
import urllib.parse

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Downloads</title></head>
<body>
<p><a id="file" href="/download/{name}">{name}</a></p>
<p><a id="blob" download="notes.txt">notes.txt</a></p>
<script>
document.getElementById("blob").href = URL.createObjectURL(new Blob(["{blob}"], {{type: "text/plain"}}));
</script>
</body></html>
"""

# What the blob: link of /page downloads; tests compare the browser's file with it.
BLOB_TEXT = "made in the page, never on a server\\n"


def served_name(name):
    return "Report " + name


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        route = urllib.parse.urlsplit(self.path).path
        if route == "/login":
            self.answer(302, headers={
                "Location": "/page",
                "Set-Cookie": f"session={self.server.secret}; HttpOnly; Path=/; SameSite=Lax",
            })
        elif route == "/page":
            page = PAGE.format(name=self.server.file_name, blob=BLOB_TEXT).encode()
            self.answer(200, page, {"Content-Type": "text/html; charset=utf-8"})
        elif route.startswith("/download/"):
            self.answer(302, headers={"Location": "/files/" + route[len("/download/"):]})
        elif route.startswith("/files/"):
            self.serve_file(route[len("/files/"):])
        elif route == "/requests":
            with self.server.lock:
                body = json.dumps(self.server.requests).encode()
            self.answer(200, body, {"Content-Type": "application/json"})
        else:
            self.answer(404)

    def serve_file(self, name):
        cookies = [part.strip() for part in self.headers.get("Cookie", "").split(";")]
        has_cookie = f"session={self.server.secret}" in cookies
        referer = self.headers.get("Referer", "")
        page = f"http://127.0.0.1:{self.server.server_address[1]}/page"
        path = os.path.join(self.server.root, name)
        if "/" in name or name.startswith(".") or not os.path.isfile(path):
            status, body = 404, b""
        elif not has_cookie or referer != page:
            status, body = 403, b""
        else:
            status = 200
            with open(path, "rb") as file:
                body = file.read()
        with self.server.lock:
            self.server.requests.append({
                "path": "/files/" + name, "status": status, "cookie": has_cookie, "referer": referer,
                "user_agent": self.headers.get("User-Agent", ""), "bytes": len(body),
            })
        if status != 200:
            return self.answer(status)
        shown = served_name(name)
        disposition = f'attachment; filename="{shown}"; filename*=UTF-8\'\'{urllib.parse.quote(shown)}'
        self.answer(200, body, {"Content-Type": "application/octet-stream", "Content-Disposition": disposition},
                    rate=self.server.rate)

    def answer(self, status, body=b"", headers=None, rate=None):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not rate:
            self.wfile.write(body)
            return
        chunk = max(1, rate // 10)
        try:
            for start in range(0, len(body), chunk):
                self.wfile.write(body[start:start + chunk])
                self.wfile.flush()
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a browser's download cancelled mid-way


class Site(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root, secret, rate):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.secret = secret
        self.rate = rate
        files = sorted(os.listdir(root))
        self.file_name = files[0] if files else "missing.bin"
        self.requests = []
        self.lock = threading.Lock()


def main():
    parser = argparse.ArgumentParser(description="A loopback web site for Haul's browser tests.")
    parser.add_argument("--root", required=True, help="the folder of files served under /files/ (the first is linked)")
    parser.add_argument("--secret", required=True, help="the value of the session cookie /login sets")
    parser.add_argument("--rate", type=int, help="pace the body of /files/ at this many bytes per second")
    arguments = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    site = Site(os.path.abspath(arguments.root), arguments.secret, arguments.rate)
    threading.Thread(target=site.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    parent = os.getppid()
    print(f"PORT {site.server_address[1]}", flush=True)
    while not stop.wait(0.25):
        if os.getppid() != parent:
            break  # the test process is gone
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
