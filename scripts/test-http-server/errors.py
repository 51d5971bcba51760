"""How the handling of a request ends early."""


class ClientGone(Exception):
    pass


class Aborted(Exception):
    """The response ended on purpose (reset, close); the connection is finished."""


class Reply(Exception):
    """Answer with a small text body right away."""

    def __init__(self, status, text=None, headers=None):
        super().__init__(status)
        self.status = status
        self.text = text
        self.headers = headers or {}
