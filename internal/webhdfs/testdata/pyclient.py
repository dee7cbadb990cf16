"""HdfsCLI (the PyPI `hdfs` package) against a smarth namenode over WebHDFS.

Usage: python pyclient.py http://host:port user

Exits 1 on the first mismatch; prints "CHECKSUM /pykeep/g <algorithm> <hex>"
for the Go test (../clients_test.go) to compare with the native client.
"""
import random
import sys

from hdfs import InsecureClient
from hdfs.util import HdfsError


def check(ok, what):
    if not ok:
        print("MISMATCH: " + what, file=sys.stderr)
        sys.exit(1)
    print("ok " + what)


def main():
    url, user = sys.argv[1], sys.argv[2]
    c = InsecureClient(url, user=user)
    c.makedirs("/pytest/dir", permission="755")
    st = c.status("/pytest/dir")
    check(st["type"] == "DIRECTORY" and st["permission"] == "755" and st["owner"] == user, "makedirs + status")

    rnd = random.Random(7)
    data = bytes(rnd.getrandbits(8) for _ in range(2 * 1024 * 1024 + 777))
    c.write("/pytest/dir/f", data=data, overwrite=True, replication=2, blocksize=1 << 20)
    with c.read("/pytest/dir/f") as r:
        check(r.read() == data, "write then read back %d bytes" % len(data))
    with c.read("/pytest/dir/f", offset=1048570, length=20) as r:
        check(r.read() == data[1048570:1048590], "read with offset and length")

    names = c.list("/pytest/dir")
    check(names == ["f"], "list")
    (name, fst), = c.list("/pytest/dir", status=True)
    check(fst["length"] == len(data) and fst["replication"] == 2 and fst["blockSize"] == 1 << 20, "list with status")

    more = b"appended by HdfsCLI\n"
    c.write("/pytest/dir/f", data=more, append=True)
    with c.read("/pytest/dir/f") as r:
        check(r.read() == data + more, "append then read back")

    c.rename("/pytest/dir/f", "/pytest/dir/g")
    check(c.status("/pytest/dir/f", strict=False) is None and c.status("/pytest/dir/g")["length"] == len(data) + len(more),
          "rename")

    cs = c.checksum("/pytest/dir/g")
    check(cs["length"] == 28, "checksum")
    print("CHECKSUM /pykeep/g %s %s" % (cs["algorithm"], cs["bytes"]))

    c.set_permission("/pytest/dir/g", "640")
    check(c.status("/pytest/dir/g")["permission"] == "640", "set_permission")
    summary = c.content("/pytest")
    check(summary["fileCount"] == 1 and summary["directoryCount"] == 2, "content summary")

    c.makedirs("/pykeep")
    c.rename("/pytest/dir/g", "/pykeep/g")  # kept for the Go test's checksum comparison

    try:
        c.status("/pytest/nope")
        check(False, "status of a missing path raises")
    except HdfsError as e:
        check("nope" in str(e), "status of a missing path raises, naming it: %s" % e)

    check(c.delete("/pytest", recursive=True), "delete -r")
    check(c.status("/pytest", strict=False) is None, "deleted directory is gone")
    check(c.delete("/pytest") is False, "delete of a missing path answers False")


if __name__ == "__main__":
    main()
