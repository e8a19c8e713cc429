"""Chromium's DevTools protocol (CDP) behind a per-desktop secret token.

Chromium's own --remote-debugging-port has no authentication: any local user (any process
in the container) that finds the port drives the browser. So Chromium is started here with
--remote-debugging-pipe (CDP on file descriptors 3 and 4, no port at all), and this bridge
serves the usual HTTP + WebSocket CDP endpoints on LISTEN_HOST:LISTEN_PORT, but only under
a secret path prefix read from TOKEN_FILE:

  GET  /<token>/json/version       {Browser, Protocol-Version, ..., webSocketDebuggerUrl}
  GET  /<token>/json[/list]        page and worker targets, URLs through this bridge
  PUT  /<token>/json/new?URL       open a page
  GET  /<token>/json/activate/ID   bring a page to the front
  GET  /<token>/json/close/ID      close a page
  WS   /<token>/devtools/browser/ID   a browser-level CDP connection
  WS   /<token>/devtools/page/ID      a page-level CDP connection
  GET  /health                     200 once Chromium answers (no token; tells nothing else)

Anything else, and any path without the token, is 403 (404 under the token). So
cdpUrl = http://HOST:PORT/<token>/ works with Playwright's connectOverCDP and any client
that resolves json/version relative to it.

One pipe, many clients: each WebSocket client gets its own CDP session on the pipe
(Target.attachToBrowserTarget, or Target.attachToTarget with flatten for a page). The
bridge adds that sessionId to the client's messages and strips it from the answers; child
sessions the client attaches (Playwright's auto-attach) are routed to it unchanged. Message
ids need no rewriting: answers carry their session. When a client leaves, its session is
detached, which also detaches the children. Domains enabled by one client stay private to
its session, as with Chromium's own server.

The bridge is Chromium's parent and lives exactly as long as it: when Chromium exits (EOF on
the pipe) the bridge exits with its status; SIGTERM/SIGINT/SIGHUP stop Chromium, then the
bridge; Chromium exits by itself when the bridge dies (EOF on its pipe). Python 3 standard
library only (the Docker image has no Node); start.sh runs it with -S (no site-packages needed).
Threads, not asyncio: importing asyncio alone costs ~40 ms of CPU on every desktop start. One
thread reads the pipe and routes; each connection has a thread, each WebSocket client also a
writer thread fed by a queue (a slow client never stalls the others).

usage: cdp-bridge.py LISTEN_HOST LISTEN_PORT TOKEN_FILE READY_FILE GO_FILE -- CHROMIUM [ARGS...]
(LISTEN_PORT 0: the OS picks one.) Once Chromium answers, the bridge writes the port it listens
on to READY_FILE (atomically), so start.sh waits on a file instead of polling the port. GO_FILE
(a fifo, or "-" to go at once): start.sh starts the bridge before X, so that Python's start-up
overlaps X's; the bridge starts Chromium when the display (":N") arrives on it.
"""
import base64
import fcntl
import hashlib
import hmac
import json
import os
import queue
import re
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

MAX_MESSAGE = 256 * 1024 * 1024  # one CDP message (a full-page screenshot is a few MB)
MAX_HEAD = 65536
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SESSION_TAIL = re.compile(rb',"sessionId":"([^"\\]+)"\}$')
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
HOST_RE = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
CALL_TIMEOUT_S = 30


def log(message: str) -> None:
    try:
        sys.stderr.write(f"cdp-bridge: {message}\n")
        sys.stderr.flush()
    except OSError:
        pass


def spawn_chromium(argv: list):
    """Start Chromium with CDP on fds 3 (it reads) and 4 (it writes); (pid, our write end, our read end)."""
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    # Keep our ends away from 3 and 4, so the dup2 below always clears close-on-exec.
    ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w)]
    for fd in (to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w):
        os.close(fd)
    to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w = ends
    pid = os.posix_spawnp(argv[0], argv, dict(os.environ), file_actions=[(os.POSIX_SPAWN_DUP2, to_chrome_r, 3), (os.POSIX_SPAWN_DUP2, from_chrome_w, 4)])
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    return pid, to_chrome_w, from_chrome_r


# ------------------------------------------------------------------ WebSocket framing (RFC 6455)


def ws_accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + WS_GUID).digest()).decode("ascii")


def ws_frame(opcode: int, payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        head = struct.pack(">BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack(">BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 127, n)
    return head + payload


def unmask(data: bytes, mask: bytes) -> bytes:
    n = len(data)
    if n == 0:
        return data
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


class WsClosed(Exception):
    pass


class Conn:
    """A blocking socket with a read buffer."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()

    def read_head(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0:
                head = bytes(self.buf[: i + 4])
                del self.buf[: i + 4]
                return head
            if len(self.buf) > MAX_HEAD:
                raise ValueError("request head too large")
            self.fill()

    def fill(self) -> None:
        chunk = self.sock.recv(262144)
        if not chunk:
            raise WsClosed(1006)
        self.buf += chunk

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out


def ws_read_message(conn: Conn, send) -> bytes:
    """The next whole text/binary message; answers pings through `send`; raises WsClosed on close or EOF."""
    parts: list = []
    size = 0
    while True:
        try:
            b0, b1 = conn.exactly(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack(">H", conn.exactly(2))
            elif n == 127:
                (n,) = struct.unpack(">Q", conn.exactly(8))
            if not b1 & 0x80:
                raise WsClosed(1002)  # clients must mask
            if size + n > MAX_MESSAGE:
                raise WsClosed(1009)
            mask = conn.exactly(4)
            data = unmask(conn.exactly(n), mask)
        except (ConnectionError, OSError, ValueError):
            raise WsClosed(1006)
        opcode = b0 & 0x0F
        if opcode == 0x8:
            raise WsClosed(1000)
        if opcode == 0x9:
            send(ws_frame(0xA, data[:125]))
            continue
        if opcode == 0xA:
            continue
        if opcode in (0x1, 0x2):
            parts = [data]
            size = n
        elif opcode == 0x0 and parts:
            parts.append(data)
            size += n
        else:
            raise WsClosed(1002)
        if b0 & 0x80:
            return parts[0] if len(parts) == 1 else b"".join(parts)


# ------------------------------------------------------------------ Chromium over the pipe


class CdpError(Exception):
    pass


class Pending:
    """One of the bridge's own commands, waiting for its answer."""

    __slots__ = ("done", "result", "error", "on_result")

    def __init__(self, on_result):
        self.done = threading.Event()
        self.result = None
        self.error = None
        self.on_result = on_result


class Browser:
    """Chromium with --remote-debugging-pipe: our own calls, and the routing of session messages."""

    def __init__(self, pid: int, to_chrome: int, from_chrome: int):
        self.pid = pid
        self.to_chrome = to_chrome
        self.from_chrome = from_chrome
        self.lock = threading.Lock()  # next_id, pending, sessions
        self.write_lock = threading.Lock()
        self.next_id = 0
        self.pending: dict = {}  # id -> Pending
        self.sessions: dict = {}  # sessionId -> Client
        self.version: dict = {}
        self.browser_id = ""
        self.ready = threading.Event()
        self.gone = threading.Event()

    def read_loop(self) -> None:
        buf = bytearray()
        try:
            while True:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    break
                start = len(buf)
                buf += chunk
                end = buf.find(b"\0", start)
                while end >= 0:
                    msg = bytes(buf[:end])
                    del buf[: end + 1]
                    self.dispatch(msg)
                    end = buf.find(b"\0")
                if len(buf) > MAX_MESSAGE:
                    log("Chromium sent a message over the size limit; giving up")
                    break
        except OSError as e:
            log(f"reading Chromium's pipe failed: {e.strerror}")
        finally:
            with self.lock:
                pending = list(self.pending.values())
                self.pending.clear()
            for p in pending:
                p.error = CdpError("Chromium closed its DevTools pipe")
                p.done.set()
            self.gone.set()

    def send_raw(self, data: bytes) -> None:
        data = data + b"\0"
        with self.write_lock:
            try:
                view = memoryview(data)
                while view:
                    n = os.write(self.to_chrome, view)
                    view = view[n:]
            except OSError:
                pass  # Chromium is gone: the read loop says so

    def start_call(self, method: str, params=None, on_result=None) -> Pending:
        """Send one of the bridge's own commands (on the pipe's root session); on_result runs in the read loop."""
        p = Pending(on_result)
        with self.lock:
            if self.gone.is_set():
                p.error = CdpError("Chromium is gone")
                p.done.set()
                return p
            self.next_id += 1
            mid = self.next_id
            self.pending[mid] = p
        msg = {"id": mid, "method": method}
        if params:
            msg["params"] = params
        self.send_raw(json.dumps(msg, separators=(",", ":")).encode())
        return p

    def call(self, method: str, params=None, on_result=None) -> dict:
        p = self.start_call(method, params, on_result)
        if not p.done.wait(CALL_TIMEOUT_S):
            raise CdpError(f"{method}: no answer from Chromium within {CALL_TIMEOUT_S} s")
        if p.error is not None:
            raise p.error
        return p.result

    def dispatch(self, msg: bytes) -> None:
        m = SESSION_TAIL.search(msg, max(0, len(msg) - 200))
        if m is not None:
            sid = m.group(1).decode("ascii", "replace")
            client = self.sessions.get(sid)
            if client is not None:
                client.send_text(msg[: m.start()] + b"}" if sid == client.session else msg, msg)
            return
        try:
            obj = json.loads(msg)
        except ValueError:
            log("Chromium sent a message that is not JSON; dropped")
            return
        if not isinstance(obj, dict):
            return
        sid = obj.get("sessionId")
        if isinstance(sid, str):  # a session message whose sessionId is not last (not seen in practice)
            client = self.sessions.get(sid)
            if client is not None:
                if sid == client.session:
                    del obj["sessionId"]
                client.send_text(json.dumps(obj, separators=(",", ":")).encode(), msg)
            return
        if "id" in obj:
            with self.lock:
                p = self.pending.pop(obj["id"], None)
            if p is None:
                return
            if "error" in obj:
                p.error = CdpError(str(obj["error"].get("message", "CDP error")))
            else:
                p.result = obj.get("result", {})
                if p.on_result is not None:
                    p.on_result(p.result)  # here: before any later message is routed
            p.done.set()
        elif obj.get("method") == "Target.detachedFromTarget":
            sid = obj.get("params", {}).get("sessionId")
            client = self.sessions.get(sid)
            if client is not None and client.session == sid:
                client.close(1000)  # its page (or browser session) went away


# ------------------------------------------------------------------ one WebSocket client


class Client:
    """One WebSocket client: its own CDP session on the pipe, and the child sessions it attached."""

    def __init__(self, browser: Browser, sock: socket.socket):
        self.browser = browser
        self.sock = sock
        self.session = ""
        self.owned: set = set()
        self.closed = False
        self.out: "queue.SimpleQueue" = queue.SimpleQueue()
        self.writer = threading.Thread(target=self.write_loop, daemon=True)
        # Frames handed to the writer thread and not yet fully written. While it is 0, a frame is written at once by
        # the thread that has it, without blocking (MSG_DONTWAIT): the hot path (a paused request's event, a small
        # answer) then costs no thread hand-off; what the socket does not take at once goes to the writer, in order.
        self.backlog = 0
        self.wlock = threading.Lock()

    def write_loop(self) -> None:
        while True:
            frame = self.out.get()
            if frame is None:
                break
            try:
                self.sock.sendall(frame)
            except OSError:
                self.close(1006)
                break
            with self.wlock:
                self.backlog -= 1
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def adopt(self, sid: str) -> None:
        with self.browser.lock:
            self.owned.add(sid)
            self.browser.sessions[sid] = self

    def send(self, frame: bytes) -> None:
        if not self.closed:
            self.emit(frame)

    def emit(self, frame: bytes) -> None:
        """Write a frame now if nothing is queued before it and the socket takes it whole; else queue (the rest of) it."""
        with self.wlock:
            if self.backlog == 0:
                try:
                    n = self.sock.send(frame, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    n = 0
                except OSError:
                    n = 0  # the writer meets the same error and closes the client
                if n == len(frame):
                    return
                frame = frame[n:]
            self.backlog += 1
            self.out.put(frame)

    def send_text(self, out: bytes, original: bytes) -> None:
        if self.closed:
            return
        # Learn the child sessions this client attaches, and forget detached ones.
        if original.startswith(b'{"method":"Target.attachedToTarget"') or original.startswith(b'{"method":"Target.detachedFromTarget"'):
            try:
                ev = json.loads(original)
                child = ev.get("params", {}).get("sessionId")
                if isinstance(child, str):
                    if ev["method"] == "Target.attachedToTarget":
                        self.adopt(child)
                    elif child != self.session:
                        with self.browser.lock:
                            if self.browser.sessions.get(child) is self:
                                self.owned.discard(child)
                                del self.browser.sessions[child]
            except (ValueError, KeyError, AttributeError):
                pass
        self.emit(ws_frame(0x1, out))

    def from_client(self, data: bytes) -> None:
        try:
            obj = json.loads(data)
        except ValueError:
            return self.reply_error(None, -32700, "Message must be a valid JSON")
        if not isinstance(obj, dict):
            return self.reply_error(None, -32600, "Message must be an object")
        sid = obj.get("sessionId")
        if sid is None:
            body = data.rstrip()
            sep = b"," if obj else b""
            self.browser.send_raw(body[:-1] + sep + b'"sessionId":"' + self.session.encode("ascii") + b'"}')
        elif self.browser.sessions.get(sid) is self:
            self.browser.send_raw(data)
        else:
            self.reply_error(obj.get("id"), -32001, "Session with given id not found.", sid)

    def reply_error(self, mid, code: int, message: str, sid=None) -> None:
        reply = {"id": mid, "error": {"code": code, "message": message}}
        if isinstance(sid, str):
            reply["sessionId"] = sid
        self.send(ws_frame(0x1, json.dumps(reply, separators=(",", ":")).encode()))

    def close(self, code: int) -> None:
        with self.browser.lock:
            if self.closed:
                return
            self.closed = True
            for sid in self.owned:
                if self.browser.sessions.get(sid) is self:
                    del self.browser.sessions[sid]
        if self.session:
            self.browser.start_call("Target.detachFromTarget", {"sessionId": self.session})  # already detached: fine
        if code != 1006:
            self.emit(ws_frame(0x8, struct.pack(">H", code)))
        self.out.put(None)


# ------------------------------------------------------------------ HTTP


class Bridge:
    def __init__(self, browser: Browser, token: str):
        self.browser = browser
        self.token = token.encode("ascii")

    def handle(self, sock: socket.socket) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Conn(sock)
        try:
            sock.settimeout(10)
            head = conn.read_head()
            self.request(head, conn)
        except (WsClosed, ValueError, ConnectionError, OSError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def respond(self, sock, status: int, reason: str, body, content_type="application/json; charset=UTF-8") -> None:
        if not isinstance(body, bytes):
            body = (json.dumps(body, indent=3) if not isinstance(body, str) else body).encode("utf-8")
        sock.sendall(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            f"Cache-Control: no-store\r\nConnection: close\r\n\r\n".encode("latin-1")
            + body
        )

    def authorized_rest(self, path: str):
        """The path after /<token> when the first segment is the token (compared in constant time), else None."""
        first, _slash, rest = path[1:].partition("/")
        if not hmac.compare_digest(first.encode("utf-8", "replace"), self.token):
            return None
        return "/" + rest

    def request(self, head: bytes, conn: Conn) -> None:
        sock = conn.sock
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        path, _, query = target.partition("?")
        if path == "/health":
            ok = self.browser.ready.is_set()
            return self.respond(sock, 200 if ok else 503, "OK" if ok else "Starting", "ok\n" if ok else "starting\n", "text/plain")
        rest = self.authorized_rest(path)
        if rest is None:
            return self.respond(sock, 403, "Forbidden", "Forbidden: this DevTools endpoint needs the desktop's token (use the cdpUrl the desktop printed).\n", "text/plain")
        if not self.browser.ready.is_set():
            return self.respond(sock, 503, "Service Unavailable", "Chromium is not ready yet\n", "text/plain")
        host = headers.get("host", "")
        if not HOST_RE.match(host):
            host = "127.0.0.1"
        base = f"{host}/{self.token.decode()}"
        if headers.get("upgrade", "").lower() == "websocket":
            return self.websocket(rest, headers, conn)
        body_len = int(headers.get("content-length", "0") or 0)
        if 0 < body_len <= MAX_HEAD:
            conn.exactly(body_len)
        self.http(method, rest.rstrip("/") or "/", query, base, sock)

    def target_json(self, t: dict, base: str) -> dict:
        tid = t.get("targetId", "")
        return {
            "description": "",
            "devtoolsFrontendUrl": f"/devtools/inspector.html?ws={base}/devtools/page/{tid}",
            "id": tid,
            "title": t.get("title", ""),
            "type": t.get("type", ""),
            "url": t.get("url", ""),
            "webSocketDebuggerUrl": f"ws://{base}/devtools/page/{tid}",
        }

    def http(self, method: str, path: str, query: str, base: str, sock) -> None:
        b = self.browser
        try:
            if path == "/json/version":
                v = b.version
                if not b.browser_id:  # asked before the start-up thread had it
                    b.browser_id = b.call("Target.getTargetInfo").get("targetInfo", {}).get("targetId", "")
                return self.respond(sock, 200, "OK", {
                    "Browser": v.get("product", ""),
                    "Protocol-Version": v.get("protocolVersion", ""),
                    "User-Agent": v.get("userAgent", ""),
                    "V8-Version": v.get("jsVersion", ""),
                    "WebKit-Version": f"537.36 ({v.get('revision', '')})",
                    "webSocketDebuggerUrl": f"ws://{base}/devtools/browser/{b.browser_id or 'browser'}",
                })
            if path in ("/json", "/json/list"):
                r = b.call("Target.getTargets")
                infos = [t for t in r.get("targetInfos", []) if t.get("type") not in ("browser", "tab")]
                return self.respond(sock, 200, "OK", [self.target_json(t, base) for t in infos])
            if path == "/json/new":
                if method != "PUT":
                    return self.respond(sock, 405, "Method Not Allowed", f"Using unsafe HTTP verb {method} to invoke /json/new. This action supports only PUT verb.\n", "text/plain")
                url = urllib.parse.unquote(query) if query else "about:blank"
                created = b.call("Target.createTarget", {"url": url})
                info = b.call("Target.getTargetInfo", {"targetId": created["targetId"]})
                return self.respond(sock, 200, "OK", self.target_json(info["targetInfo"], base))
            for prefix, command, answer in (("/json/activate/", "Target.activateTarget", "Target activated"), ("/json/close/", "Target.closeTarget", "Target is closing")):
                if path.startswith(prefix):
                    tid = urllib.parse.unquote(path[len(prefix):])
                    try:
                        b.call(command, {"targetId": tid})
                    except CdpError:
                        return self.respond(sock, 404, "Not Found", f"No such target id: {tid}\n", "text/plain")
                    return self.respond(sock, 200, "OK", answer, "text/plain")
        except CdpError as e:
            return self.respond(sock, 500, "Internal Server Error", f"{e}\n", "text/plain")
        self.respond(sock, 404, "Not Found", f"Unknown url: {path}\n", "text/plain")

    def websocket(self, rest: str, headers: dict, conn: Conn) -> None:
        sock = conn.sock
        key = headers.get("sec-websocket-key", "")
        if headers.get("sec-websocket-version") != "13" or len(key) < 16:
            return self.respond(sock, 400, "Bad Request", "Bad WebSocket handshake\n", "text/plain")
        b = self.browser
        client = Client(b, sock)

        def attached(result: dict) -> None:
            client.session = result["sessionId"]
            client.adopt(client.session)

        try:
            if rest.startswith("/devtools/browser"):
                b.call("Target.attachToBrowserTarget", None, attached)
            elif rest.startswith("/devtools/page/"):
                tid = urllib.parse.unquote(rest[len("/devtools/page/"):])
                b.call("Target.attachToTarget", {"targetId": tid, "flatten": True}, attached)
            else:
                return self.respond(sock, 404, "Not Found", f"Unknown url: {rest}\n", "text/plain")
        except CdpError as e:
            if client.session:  # attached, then timed out: let it go
                client.close(1006)
            return self.respond(sock, 404, "Not Found", f"{e}\n", "text/plain")
        sock.settimeout(None)
        # The 101 goes out first; the writer thread takes over the socket's sending from here on.
        sock.sendall(
            "HTTP/1.1 101 WebSocket Protocol Handshake\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {ws_accept_key(key)}\r\n\r\n".encode("latin-1")
        )
        client.writer.start()
        code = 1000
        try:
            while not client.closed:
                client.from_client(ws_read_message(conn, client.send))
        except WsClosed as e:
            code = e.args[0] if e.args else 1000
        finally:
            client.close(code)
            client.writer.join(10)


# ------------------------------------------------------------------ main


def serve(chromium: tuple) -> int:
    host, port, token_file, ready_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    browser = Browser(*chromium)
    stopping = threading.Event()

    def stop(_sig, _frame) -> None:
        stopping.set()
        try:
            os.kill(browser.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        with open(token_file, encoding="ascii") as f:
            token = f.read().strip()
    except OSError as e:
        token = ""
        log(f"cannot read the token file: {e.strerror}")
    if not TOKEN_RE.match(token):
        log("the token file does not hold a token of 16-128 characters [A-Za-z0-9_-]")
        os.kill(browser.pid, signal.SIGTERM)
        return 2
    try:
        server = socket.create_server((host, port), backlog=128)
    except OSError as e:
        log(f"cannot listen on {host}:{port}: {e.strerror}")
        os.kill(browser.pid, signal.SIGTERM)
        return 1
    bridge = Bridge(browser, token)
    threading.Thread(target=browser.read_loop, daemon=True).start()

    def accept_loop() -> None:
        while True:
            try:
                sock, _addr = server.accept()
            except OSError:
                return
            threading.Thread(target=bridge.handle, args=(sock,), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()

    def start() -> None:
        try:
            browser.version = browser.call("Browser.getVersion")
        except CdpError as e:
            log(f"Chromium did not answer: {e}")
            return
        browser.ready.set()
        # Announce: start.sh waits for this file (the port; HTTP is served already).
        try:
            with open(ready_file + ".part", "w", encoding="ascii") as f:
                f.write(f"{server.getsockname()[1]}\n")
            os.rename(ready_file + ".part", ready_file)
        except OSError as e:
            log(f"cannot write the ready file: {e.strerror}")
        # The browser target's id, for json/version's webSocketDebuggerUrl (any id is accepted).
        try:
            browser.browser_id = browser.call("Target.getTargetInfo").get("targetInfo", {}).get("targetId", "")
        except CdpError:
            pass

    threading.Thread(target=start, daemon=True).start()
    while not browser.gone.wait(1):  # (a timeout, so signals are handled promptly)
        pass
    try:
        server.close()
    except OSError:
        pass
    status = 0
    for _ in range(300):  # Chromium closed its pipe; it exits right after
        try:
            pid, raw = os.waitpid(browser.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            status = os.waitstatus_to_exitcode(raw)
            break
        time.sleep(0.01)
    if stopping.is_set():
        return 0
    log(f"Chromium exited (status {status})")
    return status if status > 0 else 1


def run() -> int:
    if len(sys.argv) < 8 or sys.argv[6] != "--":
        log("usage: cdp-bridge.py LISTEN_HOST LISTEN_PORT TOKEN_FILE READY_FILE GO_FILE -- CHROMIUM [ARGS...]")
        return 2
    go = sys.argv[5]
    if go != "-":
        # Started early (its start-up overlapping X's); go when start.sh writes the display.
        with open(go, "rb", buffering=0) as f:
            line = f.readline().decode("ascii", "replace").strip()
        if not line:
            return 1  # start.sh is gone
        os.environ["DISPLAY"] = line
    try:
        chromium = spawn_chromium(sys.argv[7:])
    except OSError as e:
        log(f"cannot start {sys.argv[7]}: {e.strerror}")
        return 1
    return serve(chromium)


if __name__ == "__main__":
    code = run()
    sys.stdout.flush()
    os._exit(code)  # daemon threads may sit in blocking calls: do not wait for them
