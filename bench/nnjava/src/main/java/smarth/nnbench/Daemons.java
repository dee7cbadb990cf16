package smarth.nnbench;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.hadoop.conf.Configuration;

/**
 * What serve-ha and serve-dfs share: daemons as child JVMs of the serving process, files the
 * benchmark scripts wait for written whole (atomically), and serving until a daemon dies.
 */
final class Daemons {
  /**
   * A list for the children to be started; when this JVM exits (SIGTERM included) every
   * process in it is stopped too.
   */
  static List<Process> stoppedOnExit() {
    List<Process> children = new ArrayList<>();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (Process p : children) {
        p.destroy();
      }
    }));
    return children;
  }

  /** Writes conf as Hadoop's XML to f (the configuration the children read). */
  static void writeConf(Configuration conf, File f) throws IOException {
    try (OutputStream out = new FileOutputStream(f)) {
      conf.writeXml(out);
    }
  }

  /** Starts this program's MODE in a child JVM with the given heap, its output in DIR/NAME.log. */
  static Process child(File dir, String name, String heap, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx" + heap,
        "-cp", System.getProperty("java.class.path"), Main.class.getName()));
    cmd.addAll(List.of(args));
    File log = new File(dir, name + ".log");
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
  }

  /** Fails naming the child that exited, if one did. */
  static void checkAlive(List<Process> children, String what) throws IOException {
    for (Process p : children) {
      if (!p.isAlive()) {
        throw new IOException(what + ": child " + p.pid() + " exited with status " + p.exitValue()
            + " (its log is in the --dir directory)");
      }
    }
  }

  /** Writes s to f through a temporary file, so a reader never sees half of it. */
  static void atomicWrite(File f, String s) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    Files.writeString(tmp.toPath(), s, StandardCharsets.UTF_8);
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE);
  }

  /** Copies from to f through a temporary file (the client configuration a script waits for). */
  static void atomicCopy(File from, File f) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    Files.copy(from.toPath(), tmp.toPath(), StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * Serves until a child exits, then exits with status 1: a daemon that dies ends the whole
   * service, since its figures would be a degraded cluster's.
   */
  static void serveUntilOneDies(List<Process> children) throws Exception {
    Process died = (Process) CompletableFuture.anyOf(children.stream().map(Process::onExit)
        .toArray(CompletableFuture[]::new)).get();
    System.err.println("a daemon exited (pid " + died.pid() + ", status " + died.exitValue() + "): stopping");
    System.exit(1);
  }

  private Daemons() {}
}
