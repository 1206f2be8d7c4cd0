#!/usr/bin/python3
"""Presses a button of a page in headless Chromium, as a person would:
opens URL, waits until the element SELECTOR is there, clicks it, then
waits until the element DONE (a CSS selector) has text and prints it.
Talks to Chromium over its DevTools protocol (a WebSocket), with the
standard library only.

    cdp_press.py DATA_DIR URL SELECTOR DONE
Exit 0 once DONE has text, 1 when not within 30 s."""
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


class Ws:
    """A client WebSocket of text frames, enough for the protocol."""

    def __init__(self, url):
        rest = url[len("ws://"):]
        hostport, path = rest.split("/", 1)
        host, port = hostport.split(":")
        self.s = socket.create_connection((host, int(port)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\n"
                        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.s.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("no WebSocket: %r" % head)

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.s.sendall(head + mask + body)

    def exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise RuntimeError("WebSocket closed")
            out += chunk
        return out

    def recv(self):
        b0, b1 = self.exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.exact(8))[0]
        return b0 & 0x0F, self.exact(n)


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0

    def eval(self, expr):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id,
                                 "method": "Runtime.evaluate",
                                 "params": {"expression": expr,
                                            "returnByValue": True}}))
        while True:
            op, data = self.ws.recv()
            if op != 1:
                continue
            msg = json.loads(data)
            if msg.get("id") == self.next_id:
                return msg.get("result", {}).get("result", {}).get("value")


def page_ws(profile, deadline):
    """The page target's WebSocket URL, once Chromium says its port."""
    port_file = os.path.join(profile, "DevToolsActivePort")
    while time.time() < deadline:
        try:
            port = open(port_file).read().split()[0]
            url = f"http://127.0.0.1:{port}/json/list"
            with urllib.request.urlopen(url, timeout=5) as f:
                for t in json.load(f):
                    if t.get("type") == "page":
                        return t["webSocketDebuggerUrl"]
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.2)
    raise RuntimeError("Chromium did not open its DevTools port")


def main():
    data, url, selector, done = sys.argv[1:5]
    profile = tempfile.mkdtemp(prefix="chromium-", dir=data)
    browser = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
         f"--user-data-dir={profile}", "--remote-debugging-port=0", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    try:
        page = Page(Ws(page_ws(profile, deadline)))
        q = json.dumps(selector)
        while not page.eval(f"document.querySelector({q}) !== null"):
            if time.time() > deadline:
                print(f"no {selector} on the page", file=sys.stderr)
                return 1
            time.sleep(0.2)
        page.eval(f"document.querySelector({q}).click()")
        d = json.dumps(done)
        while time.time() < deadline:
            text = page.eval(f"(document.querySelector({d}) || "
                             "{textContent: ''}).textContent")
            if text:
                print(text)
                return 0
            time.sleep(0.2)
        print(f"{done} stayed empty", file=sys.stderr)
        return 1
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()


if __name__ == "__main__":
    sys.exit(main())
