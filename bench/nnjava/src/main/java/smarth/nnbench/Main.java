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
      default -> usage();
    }
  }

  private static void usage() {
    System.err.println("""
        usage:
          nnjava serve --dir DIR --addr-file FILE
              format DIR and run a NameNode on 127.0.0.1 (a free port), write
              host:port to FILE once it serves, run until killed
          nnjava bench --nn HOST:PORT [--threads 8] [--n 10000] [--rounds 1]
                       [--ops mkdir,create,stat,rename,delete] [--dir /benchmarks/nn]
              one untimed warm-up round, then ROUNDS timed rounds of N ops of
              each kind over THREADS threads, each with its own DFSClient""");
    System.exit(2);
  }

  private Main() {}
}
