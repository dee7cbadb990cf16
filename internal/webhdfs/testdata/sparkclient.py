# Spark (pyspark, local[1]) over webhdfs:// against a smarth cluster,
# as a user would run it: on a secure cluster with
# HADOOP_TOKEN_FILE_LOCATION naming a file from `smarth fs fetchdt`, on a
# simple-auth one with HADOOP_USER_NAME. Run by TestSparkWebHDFS*
# (internal/webhdfs/spark_test.go), which checks what it prints.
#
#   python sparkclient.py webhdfs://HOST:PORT/user/alice/spark INPUT_PATH [--cancel-step]
#
# It writes text (the RDD API, Hadoop's old mapred committer) and a
# DataFrame as Parquet (overwritten once, then read back), reads a file the
# test wrote with smarth's own client, lists the directory and asks for a
# missing path. With --cancel-step it then prints CANCEL_NOW, waits for a
# line on stdin (the test cancels the token meanwhile) and tries to list
# again with a fresh FileSystem, which must be refused.
import hashlib
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException
from py4j.protocol import Py4JJavaError

T0 = time.time()


def step(name):
    """Timings go to stderr, for the test's log."""
    print("STEP %s at %.1fs" % (name, time.time() - T0), file=sys.stderr, flush=True)


def main():
    base, input_path = sys.argv[1], sys.argv[2]
    cancel_step = "--cancel-step" in sys.argv[3:]
    spark = (SparkSession.builder.master("local[1]").appName("smarth-webhdfs")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             # Files of 2 MiB blocks (Hadoop's client names the block
             # size at CREATE; the cluster's own is 1 MiB), so the text file
             # spans blocks.
             .config("spark.hadoop.dfs.blocksize", "2m")
             .getOrCreate())
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    step("started")

    # Text, more than one block (the block size asked for is 2 MiB), written
    # through Hadoop's mapred FileOutputCommitter (task and job commit are
    # renames out of _temporary) and read back in two splits, the second
    # an OPEN at an offset inside the first block that reads on into the
    # second.
    line = lambda i: "%06d %s" % (i, "spark over webhdfs " * 4)
    sc.range(30000, numSlices=1).map(line).saveAsTextFile(base + "/text")
    lines = [line(i) for i in range(30000)]
    text = sc.textFile(base + "/text", 2)
    got = text.collect()
    if got != lines:
        fail("text read back: %d lines, want %d; first %r" % (len(got), len(lines), got[:2]))
    print("TEXT %d lines %d splits" % (len(got), text.getNumPartitions()))
    step("text")

    # A DataFrame as Parquet, written, overwritten (delete, then write),
    # read back (Parquet reads its footer first: a positioned read at the
    # file's end), and filtered.
    df = spark.range(5000).selectExpr("id", "concat('name-', id) AS name", "id % 7 AS bucket")
    df.write.parquet(base + "/parquet")
    df.where("bucket = 3").write.mode("overwrite").parquet(base + "/parquet")
    back = spark.read.parquet(base + "/parquet")
    rows = sorted((r.id, r.name, r.bucket) for r in back.collect())
    want = [(i, "name-%d" % i, 3) for i in range(5000) if i % 7 == 3]
    if rows != want:
        fail("parquet read back: %d rows, want %d; first %r" % (len(rows), len(want), rows[:2]))
    print("PARQUET %d rows" % len(rows))
    step("parquet")

    # A file smarth's own client wrote.
    data = "\n".join(r.value for r in spark.read.text(input_path).collect())
    print("INPUT %d lines sha256 %s" % (data.count("\n") + 1, hashlib.sha256(data.encode()).hexdigest()))

    try:
        spark.read.parquet(base + "/nosuch").count()
        fail("reading a missing path succeeded")
    except AnalysisException as e:
        print("MISSING " + str(e).splitlines()[0])

    for st in listing(sc, base):
        print("LS %s %s %s %s" % (st.getPath().toUri().getPath(), st.getOwner(),
                                  "d" if st.isDirectory() else "f", st.getLen()))

    if cancel_step:
        print("CANCEL_NOW", flush=True)
        sys.stdin.readline()
        try:
            n = len(listing(sc, base, fresh=True))
            print("AFTER CANCEL listed %d entries" % n)
        except Py4JJavaError as e:
            print("AFTER CANCEL refused: " + e.java_exception.toString())
    step("done")
    spark.stop()
    print("DONE")


def listing(sc, base, fresh=False):
    """Hadoop's FileSystem.listStatus on base, as Spark's own code calls it;
    fresh: a new FileSystem instance rather than the cached one."""
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(base)
    conf = sc._jsc.hadoopConfiguration()
    fs = jvm.org.apache.hadoop.fs.FileSystem.newInstance(path.toUri(), conf) if fresh else path.getFileSystem(conf)
    return list(fs.listStatus(path))


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
