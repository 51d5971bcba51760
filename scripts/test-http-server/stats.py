"""What the server saw, for the tests to check, and the counters of the faults that strike a number of times.

Stats (GET /stats)
    {"paths": {"<request target exactly as sent, path?query>": {
        "requests": n, "methods": {"GET": n, ...},
        "ranges": ["bytes=10-", ...],        # Range headers received, in order (requests without one omitted)
        "bytes_sent": n,                     # body bytes of /gen, /files, /uploads (200/206) that send()
                                             # handed to the kernel, over all requests (not error bodies)
        "log": [{"method", "connection", "range", "if_range", "authorization", "cookie", "status",
                 "bytes_sent", "outcome"}, ...],
        "uploads": [{"method", "name", "bytes", "sha256", "chunked", "status", "outcome"}, ...]}},
     "tunnels": [{"target": "host:port", "proxy_authorization": header or null, "status": n}, ...],
     "forwarded": [{"method", "target": absolute URL, "proxy_authorization", "authorization", "status": n}, ...],
     "most_in_flight": n}                    # the most requests (any target, /stats aside) served at one moment
    outcome: "pending", "complete", "reset", "closed", "stalling", "client-closed" (a stalled client that went
    away is noticed within about 50 ms; any other after the server's next write fails).
    The answer waits (at most 1 s) until no body write is between send() and its accounting, so bytes a
    client has received are always counted.
POST /stats/reset clears them and the fault counters.
"""

import itertools
import json
import threading


class Stats:
    def __init__(self):
        self.cond = threading.Condition()
        self.in_send = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.paths = {}
        self.tunnels = []
        self.forwarded = []
        self.counters = {}
        self.versions = itertools.count(1)

    def _path(self, key):
        path = self.paths.get(key)
        if path is None:
            path = {"requests": 0, "methods": {}, "ranges": [], "bytes_sent": 0, "log": [], "uploads": []}
            self.paths[key] = path
        return path

    def begin_request(self, key, method, connection, range_header, if_range, authorization=None, cookie=None):
        with self.cond:
            path = self._path(key)
            path["requests"] += 1
            path["methods"][method] = path["methods"].get(method, 0) + 1
            if range_header is not None:
                path["ranges"].append(range_header)
            entry = {"method": method, "connection": connection, "range": range_header, "if_range": if_range,
                     "authorization": authorization, "cookie": cookie,
                     "status": None, "bytes_sent": 0, "outcome": "pending"}
            path["log"].append(entry)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            return entry

    def end_request(self):
        with self.cond:
            self.in_flight -= 1

    def update(self, entry, **values):
        with self.cond:
            entry.update(values)

    def add_forwarded(self, request):
        with self.cond:
            self.forwarded.append(request)

    def add_tunnel(self, tunnel):
        with self.cond:
            self.tunnels.append(tunnel)

    def add_upload(self, key, receipt):
        with self.cond:
            self._path(key)["uploads"].append(receipt)

    def take(self, method, key, fault):
        """Counts one more request of `method key` reaching `fault`; returns the new count (1-based)."""
        with self.cond:
            counters = self.counters.setdefault((method, key), {})
            counters[fault] = counters.get(fault, 0) + 1
            return counters[fault]

    def next_version(self):
        with self.cond:
            return next(self.versions)

    def begin_send(self):
        with self.cond:
            self.in_send += 1

    def end_send(self, key, entry, count, total):
        with self.cond:
            self.in_send -= 1
            if count:
                self._path(key)["bytes_sent"] += count
                entry["bytes_sent"] += count
                if total is not None and entry["bytes_sent"] >= total and entry["outcome"] == "pending":
                    entry["outcome"] = "complete"
            self.cond.notify_all()

    def snapshot(self):
        with self.cond:
            self.cond.wait_for(lambda: self.in_send == 0, timeout=1.0)
            return json.dumps({"paths": self.paths, "tunnels": self.tunnels, "forwarded": self.forwarded,
                               "most_in_flight": self.most_in_flight}, sort_keys=True).encode()

    def reset(self):
        with self.cond:
            self.paths = {}
            self.tunnels = []
            self.forwarded = []
            self.counters = {}
            self.most_in_flight = self.in_flight
