"""HdfsCLI's TokenClient (the PyPI `hdfs` package) on a secure smarth
namenode, with a Hadoop delegation token's URL string.

Usage: python pytoken.py http://host:port TOKEN live|cancelled

live: upload, download, walk, write and read Avro, checksum under
/user/alice/py (prints "CHECKSUM path algorithm hex" for the Go test,
../hadooptoken_test.go). cancelled: every call must be refused.
Exits 1 on the first mismatch.
"""
import os
import sys
import tempfile

from hdfs import TokenClient
from hdfs.ext.avro import AvroReader, AvroWriter
from hdfs.util import HdfsError


def check(ok, what):
    if not ok:
        print("MISMATCH: " + what, file=sys.stderr)
        sys.exit(1)
    print("ok " + what)


def live(c):
    work = tempfile.mkdtemp()
    data = os.urandom(1024 * 1024 + 4097)
    src = os.path.join(work, "up.bin")
    with open(src, "wb") as f:
        f.write(data)
    c.makedirs("/user/alice/py/sub")
    check(c.upload("/user/alice/py/up.bin", src) == "/user/alice/py/up.bin", "upload")
    dst = c.download("/user/alice/py/up.bin", os.path.join(work, "down.bin"))
    with open(dst, "rb") as f:
        check(f.read() == data, "download reads back %d bytes" % len(data))
    c.write("/user/alice/py/sub/note.txt", data=b"hello\n")
    walked = {(d, tuple(sorted(fs))) for d, _, fs in c.walk("/user/alice/py")}
    check(walked == {("/user/alice/py", ("up.bin",)), ("/user/alice/py/sub", ("note.txt",))}, "walk: %s" % sorted(walked))

    schema = {"type": "record", "name": "R", "fields": [{"name": "n", "type": "int"}, {"name": "s", "type": "string"}]}
    records = [{"n": i, "s": "row %d" % i} for i in range(100)]
    with AvroWriter(c, "/user/alice/py/r.avro", schema) as w:
        for r in records:
            w.write(r)
    with AvroReader(c, "/user/alice/py/r.avro") as r:
        check(list(r) == records and r.schema["name"] == "R", "avro write then read %d records" % len(records))

    cs = c.checksum("/user/alice/py/up.bin")
    print("CHECKSUM /user/alice/py/up.bin %s %s" % (cs["algorithm"], cs["bytes"]))


def cancelled(c):
    for what, call in [("list", lambda: c.list("/user/alice")), ("status", lambda: c.status("/user/alice/py/up.bin")),
                       ("read", lambda: c.read("/user/alice/py/up.bin").__enter__().read())]:
        try:
            call()
            check(False, "%s with a cancelled token is refused" % what)
        except HdfsError as e:
            # HDFS's answer to a cancelled token: 403 InvalidToken, whose
            # class HdfsCLI keeps (a 401 would be "Authentication failure").
            check(getattr(e, "exception", None) == "InvalidToken", "%s with a cancelled token is refused as InvalidToken: %s (%s)" % (what, e, getattr(e, "exception", None)))


def main():
    url, token, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    c = TokenClient(url, token)
    {"live": live, "cancelled": cancelled}[mode](c)


if __name__ == "__main__":
    main()
