"""HTTP/1.1 keep-alive connections on asyncio's own transports, as an httpx2 transport.

The chat-completions client sends through the ``openai`` package's HTTP client (httpx2), which still
builds the URL, the headers and auth, follows redirects, decodes the reply and logs the request; only the
last step, writing the request on a socket and reading the response, is done here instead of by httpcore2,
h11 and anyio, which cost about 1 ms of CPU per request with a 125 kB body. The bytes written are the ones
h11 writes: the request line, the Host header first, then the other headers in order, then the body.

Errors are httpx2's, as its own transport raises them: no connection (refused, no such host, a failed TLS
handshake) is ``ConnectError`` (``ConnectTimeout``), a connection lost or a malformed reply after that is
``RemoteProtocolError``, no bytes for the read timeout is ``ReadTimeout``. Not supported, since that client
needs none of it: HTTP/2, streamed request bodies (a body is bytes with a Content-Length) and streamed
responses (the whole reply is read before the response is returned).
"""

from __future__ import annotations

import asyncio
import re
import ssl
from typing import Any, Optional

import httpx2

_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")  # h11's checks on what it sends
_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff](?:[ \t\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: (.*))?")
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_MAX_HEAD = 64 * 1024
_PORTS = {"http": 80, "https": 443}


def request_head(request: httpx2.Request) -> bytes:
    """The request line and header lines as h11 writes them (Host first), refused as h11 refuses them."""
    method, target = request.method.encode("ascii"), request.url.raw_path
    if not (_TOKEN.fullmatch(method) and _TARGET.fullmatch(target)):
        raise httpx2.LocalProtocolError(f"illegal request line: {method!r} {target!r}", request=request)
    host, rest = [], []
    for name, value in request.headers.raw:
        if not (_TOKEN.fullmatch(name) and _VALUE.fullmatch(value)):
            raise httpx2.LocalProtocolError(f"illegal header {name!r}", request=request)
        lower = name.lower()
        if lower == b"transfer-encoding":  # httpx2's framing of a streamed body, which this writes not
            raise httpx2.LocalProtocolError("a streamed request body is not supported", request=request)
        (host if lower == b"host" else rest).append(b"%s: %s\r\n" % (name, value))
    if len(host) != 1:
        raise httpx2.LocalProtocolError("a request needs one Host header", request=request)
    return b"%s %s HTTP/1.1\r\n%s\r\n" % (method, target, b"".join(host + rest))


class _Connection(asyncio.Protocol):
    """One connection: the bytes received and not yet read, and whether the peer is gone."""

    def __init__(self) -> None:
        self.transport: Any = None  # the asyncio transport, from connection_made
        self.buffer = bytearray()
        self.gone = False
        self.idle_since = 0.0
        self._waiter: Optional[asyncio.Future] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._wake(True)

    def eof_received(self) -> None:
        self.gone = True
        self._wake(True)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.gone = True
        self._wake(True)

    def _wake(self, arrived: bool) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(arrived)

    async def _more(self, timeout: Optional[float], request: httpx2.Request) -> None:
        """Wait for more bytes: ReadTimeout after ``timeout`` s without any, RemoteProtocolError at the end."""
        if self.gone:
            if self.buffer:
                raise httpx2.RemoteProtocolError(
                    "peer closed connection without sending a complete reply", request=request
                )
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, self._wake, False)
        try:
            if not await self._waiter:
                raise httpx2.ReadTimeout("no reply within the read timeout", request=request)
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    async def _line(self, timeout: Optional[float], request: httpx2.Request) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            await self._more(timeout, request)
        line = bytes(self.buffer[:end]).rstrip(b"\r")
        del self.buffer[: end + 1]
        return line

    async def _take(self, size: int, timeout: Optional[float], request: httpx2.Request) -> bytes:
        while len(self.buffer) < size:
            await self._more(timeout, request)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def _head(self, timeout: Optional[float], request: httpx2.Request) -> list[bytes]:
        start = 0
        while (end := _HEAD_END.search(self.buffer, start)) is None:
            if len(self.buffer) > _MAX_HEAD:
                raise httpx2.RemoteProtocolError("response head too long", request=request)
            start = max(0, len(self.buffer) - 3)
            await self._more(timeout, request)
        head = bytes(self.buffer[: end.start()])
        del self.buffer[: end.end()]
        return _LINE_END.split(head)

    async def read_response(self, request: httpx2.Request, timeout: Optional[float]) -> httpx2.Response:
        """Read one response (after any 1xx) whole; ``self.gone`` is set when the connection cannot be reused."""
        while True:
            lines = await self._head(timeout, request)
            status = _STATUS.fullmatch(lines[0])
            if status is None:
                raise httpx2.RemoteProtocolError(f"bad status line {lines[0][:80]!r}", request=request)
            code = int(status[2])
            if not 100 <= code < 200:
                break
        headers: list[tuple[bytes, bytes]] = []
        for line in lines[1:]:
            if line[:1] in (b" ", b"\t") and headers:  # obsolete line folding
                headers[-1] = (headers[-1][0], headers[-1][1] + b" " + line.strip(b" \t"))
                continue
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.fullmatch(name):
                raise httpx2.RemoteProtocolError(f"bad header line {line[:80]!r}", request=request)
            headers.append((name, value.strip(b" \t")))
        fields: dict[bytes, list[bytes]] = {}
        for name, value in headers:
            fields.setdefault(name.lower(), []).append(value)
        body = await self._body(code, fields, request, timeout)
        connection = b",".join(fields.get(b"connection", [])).lower()
        if status[1] == b"0" or b"close" in connection or self.buffer:  # HTTP/1.0, or more than one reply
            self.gone = True
        return httpx2.Response(
            code,
            headers=headers,
            stream=httpx2.ByteStream(body),
            extensions={"http_version": b"HTTP/1." + status[1], "reason_phrase": status[3] or b""},
        )

    async def _body(
        self, code: int, fields: dict[bytes, list[bytes]], request: httpx2.Request, timeout: Optional[float]
    ) -> bytes:
        """The body, framed as RFC 9112 section 6.3 says: chunked, Content-Length, or up to the end."""
        if code in (204, 304) or request.method == "HEAD":
            return b""
        if b"transfer-encoding" in fields:
            if b",".join(fields[b"transfer-encoding"]).lower().replace(b" ", b"") != b"chunked":
                raise httpx2.RemoteProtocolError("only Transfer-Encoding: chunked is supported", request=request)
            parts = []
            while True:
                size_line = (await self._line(timeout, request)).split(b";", 1)[0].strip()
                if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size_line):
                    raise httpx2.RemoteProtocolError(f"bad chunk size {size_line[:20]!r}", request=request)
                size = int(size_line, 16)
                if size == 0:
                    break
                chunk = await self._take(size + 2, timeout, request)
                if not chunk.endswith(b"\r\n"):
                    raise httpx2.RemoteProtocolError("a chunk does not end with CRLF", request=request)
                parts.append(chunk[:size])
            while await self._line(timeout, request):  # trailer fields, ignored
                pass
            return b"".join(parts)
        lengths = {v.strip() for value in fields.get(b"content-length", []) for v in value.split(b",")}
        if lengths:
            length = lengths.pop()
            if lengths or not length.isdigit():
                raise httpx2.RemoteProtocolError("bad Content-Length", request=request)
            return await self._take(int(length), timeout, request)
        while not self.gone:  # neither: the body ends where the connection does
            await self._more(timeout, request)
        body = bytes(self.buffer)
        self.buffer.clear()
        return body


class KeepAliveTransport(httpx2.AsyncBaseTransport):
    """Plain or TLS HTTP/1.1 with kept-alive connections, most recently used first; one connection per
    request in flight, all kept (the client's limiter bounds how many are in flight). A connection idle
    for ``keepalive_expiry`` s is closed instead of reused, as httpcore2 does; one the server closed is
    never reused."""

    def __init__(self, tls: ssl.SSLContext, keepalive_expiry: float = 5.0) -> None:
        tls.set_alpn_protocols(["http/1.1"])  # what httpcore2 offers
        self._tls, self._expiry = tls, keepalive_expiry
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme not in _PORTS:
            raise httpx2.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}", request=request)
        timeouts = request.extensions.get("timeout", {})
        origin = (url.scheme, url.raw_host.decode("ascii"), url.port or _PORTS[url.scheme])
        head, body = request_head(request), await request.aread()
        connection = self._reuse(origin) or await self._connect(origin, timeouts.get("connect"), request)
        try:
            connection.transport.write(head)
            connection.transport.write(body)  # not joined to the head: a 128 kB copy
            response = await connection.read_response(request, timeouts.get("read"))
        except BaseException:
            connection.transport.abort()
            raise
        self._release(origin, connection)
        return response

    def _reuse(self, origin: tuple[str, str, int]) -> Optional[_Connection]:
        idle, now = self._idle.get(origin), asyncio.get_running_loop().time()
        while idle:
            connection = idle.pop()
            if not connection.gone and now - connection.idle_since < self._expiry:
                return connection
            connection.transport.close()
        return None

    def _release(self, origin: tuple[str, str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if connection.gone or self._closed:
            connection.transport.close()
            return
        connection.idle_since = asyncio.get_running_loop().time()
        idle.append(connection)

    async def _connect(
        self, origin: tuple[str, str, int], timeout: Optional[float], request: httpx2.Request
    ) -> _Connection:
        scheme, host, port = origin
        tls = self._tls if scheme == "https" else None
        loop = asyncio.get_running_loop()
        opening = loop.create_connection(
            _Connection, host, port, ssl=tls, server_hostname=host if tls else None, happy_eyeballs_delay=0.25
        )
        try:
            _, connection = await asyncio.wait_for(opening, timeout)
        except asyncio.TimeoutError:  # also the system's own connect timeout, as httpcore2 maps it
            raise httpx2.ConnectTimeout(f"no connection to {host}:{port} in time", request=request) from None
        except OSError as err:  # refused, no such host, a failed TLS handshake (ssl.SSLError is an OSError)
            raise httpx2.ConnectError(str(err) or repr(err), request=request) from err
        return connection

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().transport.close()
