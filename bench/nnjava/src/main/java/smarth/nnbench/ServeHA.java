package smarth.nnbench;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.ha.HAServiceProtocol.RequestSource;
import org.apache.hadoop.ha.HAServiceProtocol.StateChangeRequestInfo;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.qjournal.server.JournalNode;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.hdfs.tools.NNHAServiceTarget;

/**
 * HDFS HA as a production cluster runs it, on loopback: three JournalNodes
 * and two NameNodes sharing the edit log through them (QJM), each daemon in
 * its own JVM, Hadoop's defaults otherwise (the active syncs its local edit
 * log and waits for a quorum of JournalNodes, each of which syncs before it
 * answers). Failover is manual (dfs.ha.automatic-failover.enabled is false
 * by default, so no ZooKeeper or ZKFC): once both NameNodes serve as
 * standbys, nn1 is made active through HAServiceProtocol, which is what
 * {@code hdfs haadmin -transitionToActive nn1} does.
 *
 * <p>The parent process formats the namespace (formatting the JournalNodes
 * too), copies nn1's fresh name directory to nn2 (what {@code hdfs namenode
 * -bootstrapStandby} fetches), starts the daemons as child JVMs and writes
 * a client configuration naming the nameservice, its two NameNodes and
 * ConfiguredFailoverProxyProvider. Killing the parent (SIGTERM) stops the
 * children.
 */
final class ServeHA {
  static final String NS = "hans";
  private static final String[] NNS = {"nn1", "nn2"};
  private static final int JOURNALS = 3;

  static void run(Flags flags) throws Exception {
    File dir = new File(flags.require("dir")).getAbsoluteFile();
    File confFile = new File(flags.require("conf-file")).getAbsoluteFile();
    File pidFile = new File(flags.get("pid-file", new File(dir, "pids").getPath()));
    String nnHeap = flags.get("nn-heap", "4g");
    String jnHeap = flags.get("jn-heap", "1g");
    Files.createDirectories(dir.toPath());

    List<String> jns = new ArrayList<>();
    List<String> jnHttp = new ArrayList<>();
    for (int i = 0; i < JOURNALS; i++) {
      jns.add("127.0.0.1:" + freePort());
      jnHttp.add("127.0.0.1:" + freePort());
    }
    Configuration shared = new Configuration(false);
    shared.set("fs.defaultFS", "hdfs://" + NS);
    shared.set(DFSConfigKeys.DFS_NAMESERVICES, NS);
    shared.set(DFSConfigKeys.DFS_HA_NAMENODES_KEY_PREFIX + "." + NS, String.join(",", NNS));
    for (String nn : NNS) {
      shared.set(DFSConfigKeys.DFS_NAMENODE_RPC_ADDRESS_KEY + "." + NS + "." + nn, "127.0.0.1:" + freePort());
      shared.set(DFSConfigKeys.DFS_NAMENODE_HTTP_ADDRESS_KEY + "." + NS + "." + nn, "127.0.0.1:" + freePort());
    }
    shared.set(DFSConfigKeys.DFS_NAMENODE_SHARED_EDITS_DIR_KEY, "qjournal://" + String.join(";", jns) + "/" + NS);
    shared.set("dfs.client.failover.proxy.provider." + NS,
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
    // No datanodes: the benchmark makes empty files only.
    shared.setInt(DFSConfigKeys.DFS_NAMENODE_SAFEMODE_MIN_DATANODES_KEY, 0);
    File sharedFile = new File(dir, "hdfs-site.xml");
    Daemons.writeConf(shared, sharedFile);

    List<Process> children = Daemons.stoppedOnExit();
    StringBuilder pids = new StringBuilder();
    for (int i = 0; i < JOURNALS; i++) {
      Process p = Daemons.child(dir, "jn" + (i + 1), jnHeap, "journalnode", "--conf", sharedFile.getPath(),
          "--dir", new File(dir, "jn" + (i + 1)).getPath(), "--rpc", jns.get(i), "--http", jnHttp.get(i));
      children.add(p);
      pids.append("jn").append(i + 1).append(' ').append(p.pid()).append('\n');
    }
    for (String jn : jns) {
      waitListening(jn, children);
    }

    // Format through nn1 (the JournalNodes too), then give nn2 the same
    // fresh name directory, as -bootstrapStandby would.
    Configuration f = nnConf(sharedFile, dir, "nn1");
    NameNode.format(f);
    copyTree(new File(dir, "nn1").toPath(), new File(dir, "nn2").toPath());

    for (String nn : NNS) {
      Process p = Daemons.child(dir, nn, nnHeap, "namenode-ha", "--conf", sharedFile.getPath(), "--dir", dir.getPath(), "--id", nn);
      children.add(p);
      pids.append(nn).append(' ').append(p.pid()).append('\n');
    }
    for (String nn : NNS) {
      waitListening(shared.get(DFSConfigKeys.DFS_NAMENODE_RPC_ADDRESS_KEY + "." + NS + "." + nn), children);
    }
    Configuration admin = new Configuration();
    admin.addResource(new org.apache.hadoop.fs.Path(sharedFile.toURI()));
    HAServiceProtocol nn1 = new NNHAServiceTarget(admin, NS, "nn1").getProxy(admin, 60000);
    waitStandby(nn1, children);
    nn1.transitionToActive(new StateChangeRequestInfo(RequestSource.REQUEST_BY_USER));
    HAServiceProtocol nn2 = new NNHAServiceTarget(admin, NS, "nn2").getProxy(admin, 60000);
    if (nn1.getServiceStatus().getState() != HAServiceState.ACTIVE
        || nn2.getServiceStatus().getState() != HAServiceState.STANDBY) {
      throw new IOException("nn1 should be active and nn2 standby: " + nn1.getServiceStatus().getState()
          + ", " + nn2.getServiceStatus().getState());
    }

    Daemons.atomicWrite(pidFile, pids.toString());
    Daemons.atomicCopy(sharedFile, confFile);
    System.err.println("HDFS HA serving: nameservice " + NS + " (nn1 active, nn2 standby, journals " + jns
        + "), client configuration in " + confFile);
    // Serve until killed, or until a daemon dies.
    Daemons.serveUntilOneDies(children);
  }

  /** One JournalNode, run until killed. */
  static void journalNode(Flags flags) throws Exception {
    Configuration conf = new Configuration();
    conf.addResource(new org.apache.hadoop.fs.Path(new File(flags.require("conf")).toURI()));
    conf.set(DFSConfigKeys.DFS_JOURNALNODE_EDITS_DIR_KEY, new File(flags.require("dir")).getAbsolutePath());
    conf.set(DFSConfigKeys.DFS_JOURNALNODE_RPC_ADDRESS_KEY, flags.require("rpc"));
    conf.set(DFSConfigKeys.DFS_JOURNALNODE_HTTP_ADDRESS_KEY, flags.require("http"));
    JournalNode jn = new JournalNode();
    jn.setConf(conf);
    jn.start();
    System.err.println("JournalNode serving at " + jn.getBoundIpcAddress());
    new CountDownLatch(1).await();
  }

  /** One NameNode of the nameservice (it starts as a standby). */
  static void nameNode(Flags flags) throws Exception {
    Configuration conf = nnConf(new File(flags.require("conf")), new File(flags.require("dir")), flags.require("id"));
    NameNode nn = new NameNode(conf);
    System.err.println("NameNode " + flags.require("id") + " serving at " + nn.getNameNodeAddress());
    nn.join();
  }

  private static Configuration nnConf(File sharedFile, File dir, String id) {
    Configuration conf = new Configuration();
    conf.addResource(new org.apache.hadoop.fs.Path(sharedFile.toURI()));
    conf.set(DFSConfigKeys.DFS_HA_NAMENODE_ID_KEY, id);
    String uri = new File(new File(dir, id), "name").getAbsoluteFile().toURI().toString();
    conf.set(DFSConfigKeys.DFS_NAMENODE_NAME_DIR_KEY, uri);
    conf.set(DFSConfigKeys.DFS_NAMENODE_EDITS_DIR_KEY, uri);
    return conf;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Waits until addr accepts connections, failing if a child died. */
  private static void waitListening(String addr, List<Process> children) throws Exception {
    String[] hp = addr.split(":");
    for (int i = 0; ; i++) {
      Daemons.checkAlive(children, "waiting for " + addr + " to listen");
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 1000);
        return;
      } catch (IOException e) {
        if (i > 1200) {
          throw new IOException(addr + " did not listen within 2 minutes", e);
        }
        Thread.sleep(100);
      }
    }
  }

  private static void waitStandby(HAServiceProtocol nn, List<Process> children) throws Exception {
    for (int i = 0; ; i++) {
      Daemons.checkAlive(children, "waiting for nn1 to serve as a standby");
      try {
        if (nn.getServiceStatus().getState() == HAServiceState.STANDBY) {
          return;
        }
      } catch (IOException e) {
        if (i > 1200) {
          throw e;
        }
      }
      Thread.sleep(100);
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Path dst = to.resolve(from.relativize(p));
        if (Files.isDirectory(p)) {
          Files.createDirectories(dst);
        } else {
          Files.copy(p, dst, StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }

  private ServeHA() {}
}
