package smarth.nnbench;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.HdfsConstants.DatanodeReportType;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.namenode.NameNode;

/**
 * A whole HDFS cluster on loopback for data-path benchmarks (bench/dfs-compare.sh): the real
 * NameNode in this JVM and three real DataNodes, each in a JVM of its own started by this one,
 * every daemon with Hadoop's defaults except addresses (127.0.0.1, free ports), directories
 * (under --dir) and the block size. Replication stays 3 and checksums on (both defaults);
 * short-circuit reads stay off (the default), so a reader gets every byte over TCP from a
 * DataNode, as smarth's client does.
 *
 * <p>The block size is --block-size (default 64 MiB, smarth's default, so both sides cut a file
 * into the same blocks; HDFS's own default is 128 MiB). It is a client-side setting in HDFS, so
 * it goes into the configuration written to --conf-file, which a client reads as its
 * hdfs-site.xml (bench/dfs-compare.sh puts it in FsShell's configuration directory).
 *
 * <p>Once all three DataNodes have registered and reported storage with space left (so the
 * first write can place three replicas), it writes the client configuration and the daemons'
 * pids ("nn PID", "dn1 PID", ...). Killing it (SIGTERM) stops the DataNodes too.
 */
final class ServeDFS {
  private static final int DATANODES = 3;

  static void run(Flags flags) throws Exception {
    File dir = new File(flags.require("dir")).getAbsoluteFile();
    File confFile = new File(flags.require("conf-file")).getAbsoluteFile();
    File pidFile = new File(flags.get("pid-file", new File(dir, "pids").getPath()));
    String dnHeap = flags.get("dn-heap", "1g");
    long blockSize = Long.parseLong(flags.get("block-size", Long.toString(64L << 20)));
    Files.createDirectories(dir.toPath());

    Configuration conf = Serve.nameNodeConf(dir);
    NameNode.format(conf);
    NameNode nn = new NameNode(conf);
    InetSocketAddress a = nn.getNameNodeAddress();
    String fs = "hdfs://127.0.0.1:" + a.getPort();

    // What the DataNodes and the client share: the NameNode's address and the block size.
    Configuration shared = new Configuration(false);
    shared.set("fs.defaultFS", fs);
    shared.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, blockSize);
    File sharedFile = new File(dir, "hdfs-site.xml");
    Daemons.writeConf(shared, sharedFile);

    List<Process> children = Daemons.stoppedOnExit();
    StringBuilder pids = new StringBuilder("nn " + ProcessHandle.current().pid() + "\n");
    for (int i = 1; i <= DATANODES; i++) {
      String name = "dn" + i;
      Process p = Daemons.child(dir, name, dnHeap, "datanode", "--conf", sharedFile.getPath(),
          "--dir", new File(dir, name).getPath());
      children.add(p);
      pids.append(name).append(' ').append(p.pid()).append('\n');
    }

    waitDataNodes(nn, children);
    Daemons.atomicWrite(pidFile, pids.toString());
    Daemons.atomicCopy(sharedFile, confFile);
    System.err.println("HDFS serving at " + fs + " with " + DATANODES + " DataNodes, block size " + blockSize
        + "; client configuration in " + confFile);
    Daemons.serveUntilOneDies(children);
  }

  /** One DataNode, run until killed. */
  static void dataNode(Flags flags) throws Exception {
    Configuration conf = new Configuration();
    conf.addResource(new org.apache.hadoop.fs.Path(new File(flags.require("conf")).toURI()));
    conf.set(DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY, new File(flags.require("dir")).getAbsoluteFile().toURI().toString());
    // Free ports on loopback for data transfer, HTTP and IPC; the NameNode tells clients the
    // address the DataNode registers with, so it must be 127.0.0.1 rather than the host's name.
    conf.set(DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY, "127.0.0.1:0");
    conf.set(DFSConfigKeys.DFS_DATANODE_HTTP_ADDRESS_KEY, "127.0.0.1:0");
    conf.set(DFSConfigKeys.DFS_DATANODE_IPC_ADDRESS_KEY, "127.0.0.1:0");
    conf.set(DFSConfigKeys.DFS_DATANODE_HOST_NAME_KEY, "127.0.0.1");
    DataNode dn = DataNode.createDataNode(new String[0], conf);
    if (dn == null) {
      throw new IOException("the DataNode did not start (see the messages above)");
    }
    System.err.println("DataNode serving at " + dn.getXferAddress());
    // DataNode.join is package-private; a DataNode whose NameNode services have all ended is
    // down, and this JVM exits so that serve-dfs sees it and stops.
    while (dn.isDatanodeUp()) {
      Thread.sleep(1000);
    }
    System.err.println("the DataNode is down: exiting");
    System.exit(1);
  }

  /** Waits until every DataNode is live with storage space reported, failing if one died. */
  private static void waitDataNodes(NameNode nn, List<Process> children) throws Exception {
    long deadline = System.nanoTime() + 300_000_000_000L;
    for (;;) {
      Daemons.checkAlive(children, "waiting for the DataNodes to register");
      List<DatanodeDescriptor> live = nn.getNamesystem().getBlockManager().getDatanodeManager()
          .getDatanodeListForReport(DatanodeReportType.LIVE);
      if (live.size() == DATANODES && live.stream().allMatch(d -> d.getRemaining() > 0) && !nn.isInSafeMode()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("only " + live.size() + " of " + DATANODES + " DataNodes registered with space within 5 minutes"
            + (nn.isInSafeMode() ? " (the NameNode is in safe mode)" : ""));
      }
      Thread.sleep(200);
    }
  }


  private ServeDFS() {}
}
