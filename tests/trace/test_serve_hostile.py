#!/usr/bin/env python3
"""`nctrace report --serve` against other users and other pages (issue 42,
items 5, 6, 10): the server answers only the URL it printed (its token),
only for its own Host and Origin (DNS rebinding), serves a legitimate
request while a silent client, a slow one and 1000 idle connections hold
theirs open, and reads extreme windows without overflowing.

Nothing here waits for a time: each check is "answered while the other
connection is still open"; the timeouts are only there so that a hung
server fails the test instead of hanging it."""
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def start(nctrace, trace):
    p = subprocess.Popen([nctrace, "report", trace, "--serve", "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/([0-9a-f]{32})/", line)
    if not m:
        p.kill()
        raise AssertionError("no URL with a token: %r %r" % (line, p.stderr.read()[-2000:]))
    return p, m.group(0), int(m.group(1)), m.group(2)


def request(port, head, timeout=60):
    """One raw request; (status, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(head)
        got = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.1 (\d+) ", got)
    assert m, got[:200]
    return int(m.group(1)), got.split(b"\r\n\r\n", 1)[1]


def get(port, path, host=None, extra=b""):
    host = host or b"127.0.0.1:%d" % port
    return request(port, b"GET " + path + b" HTTP/1.1\r\nHost: " + host + b"\r\n" + extra + b"\r\n")


def still_open(s):
    """The server has not closed s (nothing to read, no EOF)."""
    try:
        return s.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-serve-")
    trace = os.path.join(tmp, "t.json")
    with open(trace, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"a","pid":1,"tid":1,"ts":1,"dur":5},'
                '{"ph":"X","cat":"user_annotation","name":"b","pid":1,"tid":1,"ts":10,"dur":5}]}')
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    p, url, port, token = start(nctrace, trace)
    tok = token.encode()
    try:
        # item 6: the token, the Host and the Origin
        assert get(port, b"/" + tok + b"/")[0] == 200
        st, body = get(port, b"/" + tok + b"/events?a=0&b=100000")
        assert st == 200 and b'"lanes"' in body, (st, body)
        assert get(port, b"/")[0] == 403, "the page without the token"
        assert get(port, b"/events?a=0&b=100000")[0] == 403, "events without the token"
        assert get(port, b"/" + b"0" * 32 + b"/")[0] == 403, "a wrong token"
        assert get(port, b"/" + tok[:-1] + b"/")[0] == 403, "a token cut short"
        assert get(port, b"/" + tok)[0] == 302, "/TOKEN goes to /TOKEN/"
        assert get(port, b"/" + tok + b"/", host=b"attacker.example")[0] == 403, "a foreign Host (DNS rebinding)"
        assert get(port, b"/" + tok + b"/", host=b"attacker.example:%d" % port)[0] == 403
        assert get(port, b"/" + tok + b"/", host=b"localhost:%d" % port)[0] == 200
        assert request(port, b"GET /" + tok + b"/ HTTP/1.0\r\n\r\n")[0] == 403, "no Host"
        assert get(port, b"/" + tok + b"/", extra=b"Origin: http://evil.example\r\n")[0] == 403, "a foreign Origin"
        assert get(port, b"/" + tok + b"/", extra=b"Origin: null\r\n")[0] == 403
        assert get(port, b"/" + tok + b"/", extra=b"Origin: http://127.0.0.1:%d\r\n" % port)[0] == 200
        # item 10: the window's ends at the int64 limits (UBSan: no overflow)
        st, body = get(port, b"/" + tok + b"/events?a=-9223372036854775808&b=9223372036854775807")
        assert st == 200 and b'"a":-9223372036854775808' in body, (st, body[:200])

        # item 5: a silent client, a slow one, 1000 idle connections
        silent = socket.create_connection(("127.0.0.1", port))
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /")
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1000)]
        st, body = get(port, b"/" + tok + b"/events?a=0&b=100000")
        assert st == 200, st
        slow.sendall(b"x")
        st, _ = get(port, b"/" + tok + b"/")
        assert st == 200, st
        assert still_open(silent) and still_open(slow), "answered only after closing the silent or slow client"
        assert sum(still_open(s) for s in idle) >= 900, "the idle connections were dropped to answer"
        for s in idle + [silent, slow]:
            s.close()
        assert get(port, b"/" + tok + b"/events?a=0&b=1")[0] == 200, "the server stopped answering"
    finally:
        p.terminate()
        rc = p.wait(timeout=60)
        err = p.stderr.read()
    assert rc == 0, "status after SIGTERM %d: %s" % (rc, err[-2000:])
    for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
        assert bad not in err, err[-3000:]
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
