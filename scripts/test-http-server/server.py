"""The listening socket: one thread per connection, TLS wrapped around it when asked."""

import http.server
import itertools
import socketserver

from handler import Handler
from stats import Stats


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, host, port, root, upload_dir, verbose, connect_ports=None, proxy_auth=None, tls=None):
        self.connect_ports = connect_ports
        self.proxy_auth = proxy_auth
        self.tls = tls
        self.root = root
        self.upload_dir = upload_dir
        self.verbose = verbose
        self.stats = Stats()
        self.connections = itertools.count(1)
        super().__init__((host, port), Handler)

    def server_bind(self):
        # HTTPServer.server_bind would resolve the host name (getfqdn), which can be slow; it is not needed.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        connection, address = super().get_request()
        if self.tls is not None:
            # The handshake runs in the connection's own thread, on its first read.
            connection = self.tls.wrap_socket(connection, server_side=True, do_handshake_on_connect=False)
        return connection, address

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)
