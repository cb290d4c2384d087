"""audioreason.judges.http11 (the judge client's HTTP/1.1 transport) against real servers on real sockets:
a raw TCP server that answers each request with scripted bytes (every way a body can be framed, 1xx,
gzip, closed connections), the same over TLS with a certificate made by the openssl command, and a proxy
from the environment, which the judge client honours by sending through httpx2's own transport."""

import asyncio
import gzip
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time

import httpx2
import pytest

from audioreason.judges import JudgeUnavailable, OpenAICompatibleJudge
from audioreason.judges.http11 import KeepAliveTransport

REPLY = json.dumps(
    {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3}}
).encode()


def plain(body=b"hello", extra=b""):
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s" % (extra, len(body), body)


class RawServer:
    """Answers the n-th request (on any connection) with ``replies[n]``: bytes, a list of byte pieces
    sent 20 ms apart, or (reply, "close") to close the connection after it; None sends nothing and
    closes. Records (connection number, the request's bytes)."""

    def __init__(self, replies, tls=None):
        self.replies, self.tls = list(replies), tls
        self.received: list[tuple[int, bytes]] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.tls is not None:
                try:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                except (ssl.SSLError, OSError):  # the client refused our certificate
                    conn.close()
                    continue
            self.connections += 1
            threading.Thread(target=self._talk, args=(conn, self.connections), daemon=True).start()

    def _talk(self, conn, number):
        data = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                length = next(
                    (int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
                )
                while len(data) < length:
                    data += conn.recv(65536)
                self.received.append((number, head + b"\r\n\r\n" + data[:length]))
                data = data[length:]
                reply = self.replies.pop(0)
                reply, close = reply if isinstance(reply, tuple) else (reply, None)
                for piece in [reply] if isinstance(reply, bytes) else reply or []:
                    conn.sendall(piece)
                    time.sleep(0.02)
                if close or reply is None:
                    return

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread in accept(), which close() alone does not
        self.sock.close()


def send_all(url, bodies, tls=None, timeout=5.0):
    """POST each body in turn through one httpx2 client on the transport; the responses, read."""

    async def run():
        context = tls or ssl.create_default_context()
        async with httpx2.AsyncClient(transport=KeepAliveTransport(context), timeout=timeout) as client:
            responses = []
            for body in bodies:
                responses.append(await client.post(url, content=body))
                await asyncio.sleep(0.05)  # time for a connection the server closed to be seen closed
            return responses

    return asyncio.run(run())


def test_every_framing_of_a_reply_is_read_and_the_connection_kept_while_it_may_be():
    chunked = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"8;note=x\r\ndata: a\n\r\n8\r\ndata: bc\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    packed = gzip.compress(b"unzipped")
    replies = [
        [plain()[:20], plain()[20:45], plain()[45:]],  # the head cut mid-line, then the body
        chunked,
        b"HTTP/1.1 100 Continue\r\n\r\n" + plain(b"after 100"),
        plain(packed, b"Content-Encoding: gzip\r\n"),
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 4\r\n\r\nslow",
        plain(b"last on the first", b"Connection: close\r\n"),
        (b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end", "close"),  # no length: up to the close
        (plain(b"closed after"), "close"),  # closed by the server without saying so
        plain(b"fourth"),
    ]
    server = RawServer(replies)
    try:
        responses = send_all(f"http://127.0.0.1:{server.port}/v1/x?k=1", [b"%d" % i for i in range(len(replies))])
    finally:
        server.close()
    texts = [r.text for r in responses]
    assert texts == [
        "hello",
        "data: a\ndata: bc",
        "after 100",
        "unzipped",
        "",
        "slow",
        "last on the first",
        "to the end",
        "closed after",
        "fourth",
    ]
    assert [r.status_code for r in responses][4:6] == [204, 429] and responses[5].headers["retry-after"] == "2"
    assert responses[1].headers["content-type"] == "text/event-stream" and responses[0].reason_phrase == "OK"
    assert [number for number, _ in server.received] == [1] * 7 + [2, 3, 4]
    first = server.received[0][1]
    assert first.startswith(b"POST /v1/x?k=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
    assert first.endswith(b"Content-Length: 1\r\n\r\n0")


@pytest.mark.parametrize(
    "reply, error",
    [
        (None, "Server disconnected without sending a response"),  # nothing at all
        ((plain(b"0123456789")[:-4], "close"), "peer closed connection"),  # half a body
        (b"HTTP/1.1 2OO OK\r\n\r\n", "bad status line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
    ],
)
def test_a_broken_reply_is_a_remote_protocol_error(reply, error):
    server = RawServer([reply])
    try:
        with pytest.raises(httpx2.RemoteProtocolError, match=error):
            send_all(f"http://127.0.0.1:{server.port}/", [b"x"])
    finally:
        server.close()


def test_no_reply_within_the_timeout_and_an_illegal_header():
    server = RawServer([[b"HTTP/1.1 200 OK\r\n", b""]])  # a head never finished
    try:
        with pytest.raises(httpx2.ReadTimeout):
            send_all(f"http://127.0.0.1:{server.port}/", [b"x"], timeout=0.3)

        async def bad_header():
            async with httpx2.AsyncClient(transport=KeepAliveTransport(ssl.create_default_context())) as client:
                await client.post(f"http://127.0.0.1:{server.port}/", content=b"x", headers={"X-A": "1\r\nX-B: 2"})

        with pytest.raises(httpx2.LocalProtocolError, match="illegal header"):
            asyncio.run(bad_header())
    finally:
        server.close()
    assert len(server.received) == 1  # the illegal header never went out
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # a port nothing listens on
        with pytest.raises(httpx2.ConnectError):
            send_all(f"http://127.0.0.1:{unused.getsockname()[1]}/", [b"x"])


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and localhost, made by the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    return cert, server_side


def judge_reply(base_url, **kwargs):
    judge = OpenAICompatibleJudge("m", base_url=base_url, api_key_env=None, timeout_s=5, max_attempts=2, **kwargs)

    async def run():
        try:
            return await judge.complete([{"role": "user", "content": "hi"}], {})
        finally:
            await judge.aclose()

    return asyncio.run(run())


def test_tls_with_a_trusted_certificate_and_an_untrusted_one_is_unreachable(certificate, monkeypatch):
    cert, server_side = certificate
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(REPLY), REPLY)
    server = RawServer([reply, reply], tls=server_side)
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # read when the client is made, as httpx2 reads it
        assert judge_reply(f"https://127.0.0.1:{server.port}/v1").text == "ok"
        monkeypatch.delenv("SSL_CERT_FILE")
        with pytest.raises(JudgeUnavailable, match="cannot connect to the server"):  # a failed TLS handshake
            judge_reply(f"https://127.0.0.1:{server.port}/v1")
    finally:
        server.close()
    assert len(server.received) == 1 and server.received[0][1].startswith(b"POST /v1/chat/completions HTTP/1.1")


def test_a_proxy_from_the_environment_is_used(monkeypatch):
    # judge.invalid resolves nowhere: the reply can only come through the proxy, which gets the full URL.
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(REPLY), REPLY)
    proxy = RawServer([reply])
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    try:
        assert judge_reply("http://judge.invalid/v1").text == "ok"
    finally:
        proxy.close()
    assert proxy.received[0][1].startswith(b"POST http://judge.invalid/v1/chat/completions HTTP/1.1\r\n")
