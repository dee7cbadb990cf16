package smarth.nnbench;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.server.namenode.NameNode;

/**
 * Runs the real NameNode daemon class (not MiniDFSCluster, whose builder
 * turns off the edit log's fsync by default) with Hadoop's defaults except
 * for addresses and directories: edits are fsynced before a mutation is
 * acknowledged, and group-committed under concurrency, as smarth's journal
 * is.
 */
final class Serve {
  static void run(Flags flags) throws Exception {
    File dir = new File(flags.require("dir")).getAbsoluteFile();
    File addrFile = new File(flags.require("addr-file"));
    Configuration conf = nameNodeConf(dir);
    // No datanodes: the benchmark makes empty files only, as
    // NNThroughputBenchmark does, so the namenode must not wait for any.
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_SAFEMODE_MIN_DATANODES_KEY, 0);
    NameNode.format(conf);
    NameNode nn = new NameNode(conf);
    InetSocketAddress a = nn.getNameNodeAddress();
    File tmp = new File(addrFile.getPath() + ".tmp");
    Files.writeString(tmp.toPath(), "127.0.0.1:" + a.getPort() + "\n", StandardCharsets.UTF_8);
    Files.move(tmp.toPath(), addrFile.toPath(), StandardCopyOption.ATOMIC_MOVE);
    System.err.println("NameNode serving at 127.0.0.1:" + a.getPort());
    nn.join();
  }

  /**
   * Hadoop's defaults, with the name directory (image and edits) under dir and the NameNode's
   * RPC and HTTP servers on free ports of 127.0.0.1 (serve-dfs's NameNode too).
   */
  static Configuration nameNodeConf(File dir) {
    Configuration conf = new Configuration();
    String uri = dir.toURI().toString();
    conf.set(DFSConfigKeys.DFS_NAMENODE_NAME_DIR_KEY, uri + "/name");
    conf.set(DFSConfigKeys.DFS_NAMENODE_EDITS_DIR_KEY, uri + "/name");
    conf.set(DFSConfigKeys.DFS_NAMENODE_RPC_ADDRESS_KEY, "127.0.0.1:0");
    conf.set(DFSConfigKeys.DFS_NAMENODE_HTTP_ADDRESS_KEY, "127.0.0.1:0");
    conf.set("fs.defaultFS", "hdfs://127.0.0.1:0");
    return conf;
  }

  private Serve() {}
}
