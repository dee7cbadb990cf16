package smarth;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Arrays;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs Hadoop's WebHdfsFileSystem, and FsShell as `hadoop fs` does,
 * against a smarth namenode: mkdirs, create, read back, listStatus,
 * append, rename, getFileChecksum, setPermission, delete (leaving the
 * checksummed file at /javakeep/g), then `fs -put`,
 * `-ls`, `-appendToFile`, `-get`, `-cat`, `-rm` to the trash, `-rm -r`. Exits 1 on the first
 * mismatch; prints "CHECKSUM /javakeep/g <algorithm> <hex>" for the Go
 * test to compare with the native client.
 *
 * Usage: WebHdfsCheck webhdfs://host:port user workdir
 */
public final class WebHdfsCheck {
  private static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("MISMATCH: " + what);
      System.exit(1);
    }
    System.out.println("ok " + what);
  }

  private static byte[] readAll(FileSystem fs, Path p) throws Exception {
    try (InputStream in = fs.open(p)) {
      return in.readAllBytes();
    }
  }

  public static void main(String[] args) throws Exception {
    final URI uri = URI.create(args[0]);
    final String user = args[1];
    final File work = new File(args[2]);
    final Configuration conf = new Configuration();
    conf.set("fs.defaultFS", uri.toString());
    conf.setInt("dfs.replication", 2);
    conf.setLong("dfs.blocksize", 1L << 20);
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
    ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
      run(uri, conf, work);
      return null;
    });
  }

  private static void run(URI uri, Configuration conf, File work) throws Exception {
    FileSystem fs = FileSystem.get(uri, conf);
    check(fs.getClass().getSimpleName().equals("WebHdfsFileSystem"), "file system is WebHdfsFileSystem");
    Path dir = new Path("/javatest/dir");
    check(fs.mkdirs(dir), "mkdirs " + dir);
    check(fs.getFileStatus(dir).isDirectory(), "mkdirs made a directory");

    byte[] data = new byte[(3 << 20) + 4321];
    new Random(42).nextBytes(data);
    Path f = new Path(dir, "f");
    try (OutputStream out = fs.create(f, true)) {
      out.write(data);
    }
    check(Arrays.equals(readAll(fs, f), data), "create then open reads back " + data.length + " bytes");
    try (org.apache.hadoop.fs.FSDataInputStream in = fs.open(f)) {
      byte[] part = new byte[1000];
      in.readFully(2_000_000, part);
      check(Arrays.equals(part, Arrays.copyOfRange(data, 2_000_000, 2_001_000)), "positioned read");
    }

    FileStatus[] ls = fs.listStatus(dir);
    check(ls.length == 1 && ls[0].getPath().getName().equals("f") && ls[0].getLen() == data.length
        && ls[0].getReplication() == 2 && ls[0].getOwner().equals(UserGroupInformation.getCurrentUser().getShortUserName()),
        "listStatus shows f with its length, replication and owner");

    byte[] more = "appended by WebHdfsFileSystem\n".getBytes("UTF-8");
    try (OutputStream out = fs.append(f)) {
      out.write(more);
    }
    byte[] both = new byte[data.length + more.length];
    System.arraycopy(data, 0, both, 0, data.length);
    System.arraycopy(more, 0, both, data.length, more.length);
    check(Arrays.equals(readAll(fs, f), both), "append then read back");

    Path g = new Path(dir, "g");
    check(fs.rename(f, g), "rename f to g");
    check(!fs.exists(f) && fs.exists(g), "after rename only g exists");
    check(!fs.rename(new Path(dir, "missing"), new Path(dir, "x")), "rename of a missing file answers false");

    FileChecksum sum = fs.getFileChecksum(g);
    check(sum != null && sum.getLength() == 28, "getFileChecksum");
    System.out.println("CHECKSUM /javakeep/g " + sum.getAlgorithmName() + " " + org.apache.hadoop.util.StringUtils.byteToHexString(
        // getBytes() is the whole serialisation buffer (zero padded past
        // getLength(), a Hadoop quirk); the checksum is its first bytes.
        Arrays.copyOf(sum.getBytes(), sum.getLength())));

    fs.setPermission(g, new FsPermission((short) 0640));
    check(fs.getFileStatus(g).getPermission().toShort() == 0640, "setPermission 640");

    // Kept for the Go test, which checks the native client's checksum of it.
    check(fs.mkdirs(new Path("/javakeep")) && fs.rename(g, new Path("/javakeep/g")), "rename into another directory");

    try {
      fs.getFileStatus(new Path("/javatest/nope"));
      check(false, "getFileStatus of a missing path throws");
    } catch (java.io.FileNotFoundException e) {
      check(true, "getFileStatus of a missing path throws FileNotFoundException");
    }

    check(fs.delete(new Path("/javatest/dir"), true), "delete -r");
    check(!fs.exists(dir), "deleted directory is gone");

    // `hadoop fs` against webhdfs://, as a user types it.
    File local = new File(work, "local.txt");
    Files.write(local.toPath(), "line one\nline two\n".getBytes("UTF-8"));
    File extra = new File(work, "extra.txt");
    Files.write(extra.toPath(), "line three\n".getBytes("UTF-8"));
    String base = uri + "/javatest/shell";
    shell(conf, "-mkdir", "-p", base);
    shell(conf, "-put", local.getPath(), base + "/t.txt");
    shell(conf, "-ls", base);
    shell(conf, "-appendToFile", extra.getPath(), base + "/t.txt");
    File back = new File(work, "back.txt");
    shell(conf, "-get", base + "/t.txt", back.getPath());
    check(new String(Files.readAllBytes(back.toPath()), "UTF-8").equals("line one\nline two\nline three\n"),
        "fs -put, -appendToFile, -get round trip");
    shell(conf, "-cat", base + "/t.txt");
    // With the trash on, Hadoop 3.4's -rm renames with Rename.TO_TRASH
    // (renameoptions=TO_TRASH) into the caller's home's .Trash/Current.
    Configuration trashConf = new Configuration(conf);
    trashConf.setLong("fs.trash.interval", 60);
    shell(trashConf, "-rm", "-r", base + "/t.txt");
    Path trashed = new Path(fs.getHomeDirectory(), ".Trash/Current/javatest/shell/t.txt");
    check(!fs.exists(new Path(base + "/t.txt")) && fs.exists(trashed), "fs -rm moved the file to " + trashed);
    shell(conf, "-rm", "-r", "-skipTrash", uri + "/javatest");
    check(!fs.exists(new Path("/javatest")), "fs -rm -r removed it");
  }

  private static void shell(Configuration conf, String... argv) throws Exception {
    int rc = ToolRunner.run(new FsShell(conf), argv);
    check(rc == 0, "hadoop fs " + String.join(" ", argv));
  }
}
