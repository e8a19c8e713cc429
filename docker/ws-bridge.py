"""websockify, started without numpy, answering only under a per-desktop secret path.

websockify imports numpy only to unmask client frames faster; a VNC client sends a few
bytes per input event, so numpy buys nothing here and costs ~50 ms and a burst of BLAS
threads at start. Blocking it halves the time until the port is open (~80 ms vs ~140 ms).

--token-file FILE (ours, first): the WebSocket upgrade is accepted only for the path
/<token> (or /<token>/), the token read from FILE (compared in constant time); any other
path gets 403 before the upgrade, so only whoever holds vncUrl reaches the VNC server. The
token never appears in the log (websockify logs each connection's path). The other
arguments are websockify's own.
"""
import hmac
import re
import sys
import warnings

sys.modules["numpy"] = None  # makes `import numpy` raise ImportError inside websockify
warnings.simplefilter("ignore")

from websockify.auth_plugins import AuthenticationError  # noqa: E402
from websockify.websocketproxy import ProxyRequestHandler, websockify_init  # noqa: E402


def read_token(argv: list) -> bytes:
    if len(argv) < 3 or argv[1] != "--token-file":
        sys.exit("ws-bridge.py: usage: ws-bridge.py --token-file FILE [websockify arguments]")
    with open(argv[2], encoding="ascii") as f:
        token = f.read().strip()
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,128}", token):
        sys.exit("ws-bridge.py: the token file does not hold a token of 16-128 characters [A-Za-z0-9_-]")
    del argv[1:3]
    return token.encode("ascii")


TOKEN = read_token(sys.argv)
_validate = ProxyRequestHandler.validate_connection


def validate_connection(self) -> None:
    """Refuse (403, before the upgrade) any path other than /<token>."""
    path = self.path.split("?", 1)[0].strip("/")
    if not hmac.compare_digest(path.encode("utf-8", "replace"), TOKEN):
        ex = AuthenticationError(response_code=403, response_msg="Forbidden")
        self.send_auth_error(ex)
        raise ex
    _validate(self)


_log_message = ProxyRequestHandler.log_message


def log_message(self, format: str, *args) -> None:
    """websockify logs each connection's path: keep the token out of the log."""
    text = (format % args) if args else format
    _log_message(self, "%s", text.replace(TOKEN.decode("ascii"), "<token>"))


ProxyRequestHandler.validate_connection = validate_connection
ProxyRequestHandler.log_message = log_message
sys.argv[0] = "websockify"
websockify_init()
