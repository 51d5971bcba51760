"""Request bodies: an upload is stored (with its faults), any other body is read and dropped.

    PUT /upload/<name>   stores the body (Content-Length or chunked) under --upload-dir; 201
    POST /upload/<name>  the same; 200
    Both answer JSON {"name", "method", "bytes", "sha256"} and headers X-Received-SHA256/-Bytes; the file is then
    served as /uploads/<name>. reset-after=N resets the connection after N body bytes (see faults.py).
"""

import hashlib
import json
import os
import socket
import struct
import time
import urllib.parse

from errors import Aborted, ClientGone, Reply
from generator import BLOCK


class Uploads:
    """The handler's part that reads request bodies."""

    def drain_request_body(self):
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            for _ in self.read_chunked_body():
                pass
        elif length:
            remaining = int(length)
            while remaining > 0:
                data = self.rfile.read(min(BLOCK, remaining))
                if not data:
                    raise ClientGone()
                remaining -= len(data)

    def read_chunked_body(self):
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise ClientGone()
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers
                    trailer = self.rfile.readline(65537)
                    if not trailer:
                        raise ClientGone()
                    if trailer in (b"\r\n", b"\n"):
                        return
            yield from self.read_length_body(size)
            self.rfile.readline(3)

    def read_length_body(self, length):
        remaining = length
        while remaining > 0:
            data = self.rfile.read(min(BLOCK, remaining))
            if not data:
                raise ClientGone()
            remaining -= len(data)
            yield data

    def upload(self):
        name = self.route[len("/upload/"):]
        if not name or "/" in name or name.startswith("."):
            self.drain_request_body()
            raise Reply(400, "bad upload name")
        chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
        if chunked:
            pieces = self.read_chunked_body()
        else:
            pieces = self.read_length_body(int(self.headers.get("Content-Length") or 0))
        receipt = {"method": self.command, "name": name, "bytes": 0, "sha256": None, "chunked": chunked,
                   "status": None, "outcome": "pending"}
        self.server.stats.add_upload(self.path, receipt)
        reset_delay = self.param("reset-delay", float, 0.1)
        self.param("reset-times", int)
        reset_at = self.fault_point("reset")
        sha = hashlib.sha256()
        received = 0
        partial = os.path.join(self.server.upload_dir, f".{name}.{self.connection_id}.part")
        try:
            with open(partial, "wb") as output:
                for piece in pieces:
                    if reset_at is not None and received + len(piece) >= reset_at:
                        piece = piece[:reset_at - received]
                    output.write(piece)
                    sha.update(piece)
                    received += len(piece)
                    self.server.stats.update(receipt, bytes=received)
                    if reset_at is not None and received >= reset_at:
                        self.server.stats.update(receipt, sha256=sha.hexdigest(), outcome="reset")
                        self.abort_upload(reset_delay)
            if reset_at is not None and received >= reset_at:
                self.server.stats.update(receipt, sha256=sha.hexdigest(), outcome="reset")
                self.abort_upload(reset_delay)
            digest = sha.hexdigest()
            self.server.stats.update(receipt, sha256=digest)
            try:
                self.apply_request_faults()
            except Reply as reply:
                self.server.stats.update(receipt, status=reply.status, outcome="complete")
                raise
            os.replace(partial, os.path.join(self.server.upload_dir, name))
        except ClientGone:
            self.server.stats.update(receipt, outcome="client-closed")
            raise
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
        status = 201 if self.command == "PUT" else 200
        self.server.stats.update(receipt, status=status, outcome="complete")
        body = json.dumps({"name": name, "method": self.command, "bytes": received, "sha256": digest}).encode()
        self.reply_bytes(status, body, "application/json",
                         {"X-Received-SHA256": digest, "X-Received-Bytes": str(received),
                          "Location": f"/uploads/{urllib.parse.quote(name)}"})

    def abort_upload(self, delay):
        time.sleep(delay)
        self.server.stats.update(self.entry, outcome="reset")
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        raise Aborted()
