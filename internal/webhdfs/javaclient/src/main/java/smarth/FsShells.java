package smarth;

import java.io.File;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs several `hadoop fs` command lines (Hadoop's FsShell, as the hadoop
 * script runs it) in one JVM, so a test pays for one JVM start, not one
 * per command.
 *
 * Usage: FsShells CMD ARGS... [-- [--token FILE] CMD ARGS...]...
 *
 * A command line without --token runs as the login user, who holds the
 * tokens Hadoop itself reads from HADOOP_TOKEN_FILE_LOCATION. One with
 * --token FILE runs as a user holding only FILE's tokens (none for "").
 * After each, prints "== rc N" (FsShell's exit code) on stdout; with
 * -Dsmarth.fsshells.mark=true also "== rc N" on stderr, so a caller
 * reading the two streams apart can split each into the lines' parts.
 */
public final class FsShells {
  public static void main(String[] args) throws Exception {
    final Configuration conf = new Configuration();
    List<List<String>> lines = new ArrayList<>();
    List<String> cur = new ArrayList<>();
    for (String a : args) {
      if (a.equals("--")) {
        lines.add(cur);
        cur = new ArrayList<>();
      } else {
        cur.add(a);
      }
    }
    lines.add(cur);
    for (List<String> line : lines) {
      UserGroupInformation ugi = UserGroupInformation.getLoginUser();
      if (line.size() >= 2 && line.get(0).equals("--token")) {
        ugi = UserGroupInformation.createRemoteUser("fsshells");
        if (!line.get(1).isEmpty()) {
          ugi.addCredentials(Credentials.readTokenStorageFile(new File(line.get(1)), conf));
        }
        line = line.subList(2, line.size());
      }
      final String[] argv = line.toArray(new String[0]);
      int rc = ugi.doAs((PrivilegedExceptionAction<Integer>) () -> ToolRunner.run(new FsShell(new Configuration(conf)), argv));
      // Each line as its own `hadoop fs` process: FileSystem.get caches
      // instances with the Configuration they were made with, so a later
      // line's -D dfs.replication=1 would otherwise meet an earlier
      // line's client.
      FileSystem.closeAll();
      if (Boolean.getBoolean("smarth.fsshells.mark")) {
        System.err.println("== rc " + rc);
      }
      System.err.flush();
      System.out.println("== rc " + rc + " " + String.join(" ", Arrays.asList(argv)));
      System.out.flush();
    }
    System.exit(0);
  }
}
