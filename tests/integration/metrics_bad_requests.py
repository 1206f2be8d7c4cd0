#!/usr/bin/python3
"""A Cairn metrics port given bad requests: a POST is 405, a head past
8 KiB is 431, and a proper GET still works afterwards.

    metrics_bad_requests.py PORT      (exit 0 when all hold)
"""
import socket
import sys

PORT = int(sys.argv[1])


def ask(data):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    try:
        s.sendall(data)
    except OSError:
        pass  # the server may answer and close before taking it all
    got = b""
    while True:
        try:
            b = s.recv(4096)
        except ConnectionResetError:
            return got
        if not b:
            return got
        got += b


def main():
    r = ask(b"POST /metrics HTTP/1.0\r\n\r\n")
    assert r.startswith(b"HTTP/1.1 405"), r[:40]
    r = ask(b"x" * 9000)
    assert r.startswith(b"HTTP/1.1 431"), r[:40]
    r = ask(b"GET /metrics HTTP/1.0\r\n\r\n")
    assert r.startswith(b"HTTP/1.1 200"), r[:40]
    return 0


if __name__ == "__main__":
    sys.exit(main())
