package smarth.nnbench;

import java.util.Arrays;

/**
 * Entry point: {@code serve} runs Apache HDFS's NameNode in this JVM,
 * {@code bench} drives one over Hadoop RPC. They are separate processes so
 * that the client's CPU is not the server's, as with `smarth bench nn`
 * against a smarth namenode.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    switch (args[0]) {
      case "serve" -> Serve.run(Flags.parse(rest));
      case "bench" -> Bench.run(Flags.parse(rest));
      case "serve-ha" -> ServeHA.run(Flags.parse(rest));
      case "journalnode" -> ServeHA.journalNode(Flags.parse(rest));
      case "namenode-ha" -> ServeHA.nameNode(Flags.parse(rest));
      case "serve-dfs" -> ServeDFS.run(Flags.parse(rest));
      case "datanode" -> ServeDFS.dataNode(Flags.parse(rest));
      default -> usage();
    }
  }

  private static void usage() {
    System.err.println("""
        usage:
          nnjava serve --dir DIR --addr-file FILE
              format DIR and run a NameNode on 127.0.0.1 (a free port), write
              host:port to FILE once it serves, run until killed
          nnjava serve-ha --dir DIR --conf-file FILE [--pid-file FILE]
                          [--nn-heap 4g] [--jn-heap 1g]
              HDFS HA on 127.0.0.1: three JournalNodes and two NameNodes
              (QJM), each in its own JVM, nn1 made active by hand; writes
              the client configuration (nameservice hans) to FILE once nn1
              is active and the daemons' pids to DIR/pids; runs until killed
          nnjava serve-dfs --dir DIR --conf-file FILE [--pid-file FILE]
                           [--block-size 67108864] [--dn-heap 1g]
              a NameNode in this JVM and three DataNodes, each in its own
              JVM, on 127.0.0.1; writes the client configuration (a
              core-site.xml and hdfs-site.xml for FsShell) once all three
              have registered, and the daemons' pids to DIR/pids; runs
              until killed
          nnjava bench --nn HOST:PORT|NAMESERVICE [--conf FILE] [--threads 8] [--n 10000] [--rounds 1]
                       [--ops mkdir,create,stat,rename,delete] [--dir /benchmarks/nn]
              one untimed warm-up round, then ROUNDS timed rounds of N ops of
              each kind over THREADS threads, each with its own DFSClient""");
    System.exit(2);
  }

  private Main() {}
}
