package main

import (
	"slices"
	"strings"
	"testing"
)

// hdfs dfs's spelling of a command ("fs -ls /") is rewritten into ours
// before cobra routes the line; without it "-ls" was the flags -l -s, and
// "fs -mkdir test" ran `fs test` (cobra routes to the first word naming a
// command).
func TestHadoopSpellingOfFsCommands(t *testing.T) {
	root := newRootCmd()
	for _, c := range []struct{ in, want string }{
		{"fs -ls /", "fs ls /"},
		{"fs -mkdir test", "fs mkdir test"},
		{"fs -rm -r -skipTrash /x", "fs rm -r -skipTrash /x"},
		{"fs --namenode 127.0.0.1:1 -cat /a", "fs --namenode 127.0.0.1:1 cat /a"},
		{"fs --namenode=127.0.0.1:1 -cat /a", "fs --namenode=127.0.0.1:1 cat /a"},
		{"fs -help ls", "fs ls --help"},
		{"fs -usage", "fs --help"},
		{"fs -copyFromLocal a /b", "fs copyFromLocal a /b"},
		{"fs -nosuch /x", "fs -- -nosuch /x"},
		{"fs ls /", "fs ls /"},
		{"fs -h", "fs -h"},
		{"job run -ls", "job run -ls"},
		// Hadoop's generic options before the command.
		{"fs -D dfs.replication=1 -put a /b", "fs put -D dfs.replication=1 a /b"},
		{"fs -Ddfs.replication=1 -put a /b", "fs put -D dfs.replication=1 a /b"},
		{"fs -D dfs.replication=1 put a /b", "fs put -D dfs.replication=1 a /b"},
		{"fs -D dfs.replication=1 -ls /", "fs ls /"},
		{"fs -D io.file.buffer.size=8192 -D dfs.blocksize=1m -put a /b", "fs put -D dfs.blocksize=1m a /b"},
		{"fs -fs hdfs://nn:9000 -ls /", "fs --namenode nn:9000 ls /"},
		{"fs -D fs.defaultFS=hdfs://nn -ls /", "fs --namenode nn:8020 ls /"},
		{"fs --user bob -Dx=y -cat /a", "fs --user bob cat /a"},
		{"fs -fs file:/// -ls /", "fs -fs file:/// -ls /"},
	} {
		if got := strings.Join(hadoopArgs(root, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%q -> %q, want %q", c.in, got, c.want)
		}
	}
	// And as run: an unknown dash word is an unknown command (exit 2),
	// a known one reaches its command.
	if rc, _, msg := runSmarth("fs", "-nosuch"); rc != 2 || !strings.HasPrefix(msg, "-nosuch: Unknown command\n") {
		t.Errorf("fs -nosuch: rc %d, %q; want 2 and an unknown command", rc, msg)
	}
	if rc, out, msg := runSmarth("fs", "-help", "mkdir"); rc != 0 || !strings.Contains(out, "smarth fs mkdir") {
		t.Errorf("fs -help mkdir: rc %d, %q %q; want mkdir's help", rc, out, msg)
	}
	if !slices.Equal(hadoopArgs(root, nil), nil) {
		t.Error("no args changed")
	}
}
