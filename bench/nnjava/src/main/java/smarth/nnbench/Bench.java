package smarth.nnbench;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CryptoProtocolVersion;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DFSClient;
import org.apache.hadoop.hdfs.protocol.ClientProtocol;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;
import org.apache.hadoop.io.EnumSetWritable;

/**
 * The same namespace operations as smarth's internal/bench/nn.go, made
 * with the same ClientProtocol calls HDFS's own FileSystem makes:
 * mkdir = mkdirs, create = create + complete of an empty file, stat =
 * getFileInfo, rename = rename, delete = non-recursive delete. Thread t
 * does entries t, t+T, ... in its own directory, with its own DFSClient
 * (its own client name and lease, as in NNThroughputBenchmark); Hadoop's
 * IPC multiplexes the threads' calls over one connection, which is how a
 * Java client reaches a NameNode.
 */
final class Bench {
  static final List<String> OPS = List.of("mkdir", "create", "stat", "rename", "delete");

  private final ClientProtocol[] nn;
  private final String[] names;
  private final String dir;
  private final int n;
  private boolean renamed; // whether files now carry their renamed name

  private Bench(Configuration conf, String addr, int threads, int n, String dir) throws IOException {
    this.nn = new ClientProtocol[threads];
    this.names = new String[threads];
    for (int t = 0; t < threads; t++) {
      DFSClient c = new DFSClient(URI.create("hdfs://" + addr), conf);
      nn[t] = c.getNamenode();
      names[t] = c.getClientName();
    }
    this.n = n;
    this.dir = dir;
  }

  static void run(Flags flags) throws Exception {
    String addr = flags.require("nn");
    int threads = flags.getInt("threads", 8);
    int n = flags.getInt("n", 10000);
    int rounds = flags.getInt("rounds", 1);
    List<String> ops = Arrays.asList(flags.get("ops", String.join(",", OPS)).split(","));
    for (String op : ops) {
      if (!OPS.contains(op)) {
        throw new IllegalArgumentException("unknown op " + op + " (want " + OPS + ")");
      }
    }
    Configuration conf = new Configuration();
    String confFile = flags.get("conf", "");
    if (!confFile.isEmpty()) {
      conf.addResource(new org.apache.hadoop.fs.Path(new java.io.File(confFile).toURI()));
    }
    Bench b = new Bench(conf, addr, threads, n, flags.get("dir", "/benchmarks/nn"));
    // The JIT compiles the client and server paths during this round; its
    // figures are printed but are not results.
    b.round("warmup", ops, threads);
    for (int r = 1; r <= rounds; r++) {
      b.round("round " + r, ops, threads);
    }
    b.nn[0].delete(b.dir, true);
  }

  private void round(String label, List<String> ops, int threads) throws Exception {
    prepare(threads);
    for (String op : OPS) { // canonical order: each leaves what the next needs
      boolean want = ops.contains(op);
      if (!want && op.equals("create") && (ops.contains("stat") || ops.contains("rename") || ops.contains("delete"))) {
        timed("create"); // untimed for the result: later ops need files
        continue;
      }
      if (!want) {
        continue;
      }
      double secs = timed(op);
      System.out.printf("%s  %-7s %6d ops  %2d threads  %7.2f s  %9.0f ops/s%n", label, op, n, threads, secs, n / secs);
    }
  }

  /** A clean directory per round, one subdirectory per thread. */
  private void prepare(int threads) throws IOException {
    nn[0].delete(dir, true);
    FsPermission p = new FsPermission((short) 0755);
    for (int t = 0; t < threads; t++) {
      nn[0].mkdirs(dir + "/files/t" + t, p, true);
      nn[0].mkdirs(dir + "/dirs/t" + t, p, true);
    }
    renamed = false;
  }

  private double timed(String op) throws Exception {
    AtomicReference<Exception> failed = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    long start = System.nanoTime();
    for (int t = 0; t < nn.length; t++) {
      final int th = t;
      Thread th0 = new Thread(() -> {
        try {
          for (int i = th; i < n && failed.get() == null; i += nn.length) {
            one(op, th, i);
          }
        } catch (Exception e) {
          failed.compareAndSet(null, e);
        }
      });
      ts.add(th0);
      th0.start();
    }
    for (Thread t : ts) {
      t.join();
    }
    double secs = (System.nanoTime() - start) / 1e9;
    if (failed.get() != null) {
      throw new IOException("bench " + op + ": " + failed.get(), failed.get());
    }
    if (op.equals("rename")) {
      renamed = true;
    }
    return secs;
  }

  private String file(int t, int i) {
    return dir + "/files/t" + t + "/f" + i;
  }

  private String renamedFile(int t, int i) {
    return dir + "/files/t" + t + "/r" + i;
  }

  private void one(String op, int t, int i) throws IOException {
    ClientProtocol c = nn[t];
    FsPermission p = new FsPermission((short) 0644);
    switch (op) {
      case "mkdir" -> check(c.mkdirs(dir + "/dirs/t" + t + "/d" + i, new FsPermission((short) 0755), false), op, i);
      case "create" -> {
        String f = file(t, i);
        HdfsFileStatus st = c.create(f, p, names[t],
            new EnumSetWritable<>(EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE)),
            false, (short) 3, 128L << 20, CryptoProtocolVersion.supported(), null, null);
        // An empty file completes at once; loop like DFSOutputStream would.
        for (int k = 0; !c.complete(f, names[t], null, st.getFileId()); k++) {
          if (k == 100) {
            throw new IOException("complete " + f + ": still not complete");
          }
        }
      }
      case "stat" -> {
        if (c.getFileInfo(file(t, i)) == null) {
          throw new IOException("stat " + file(t, i) + ": not found");
        }
      }
      case "rename" -> check(c.rename(file(t, i), renamedFile(t, i)), op, i);
      case "delete" -> check(c.delete(renamed ? renamedFile(t, i) : file(t, i), false), op, i);
      default -> throw new IllegalArgumentException(op);
    }
  }

  private static void check(boolean ok, String op, int i) throws IOException {
    if (!ok) {
      throw new IOException(op + " " + i + " returned false");
    }
  }
}
