package fsshell_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// TestFsckOptions: fsck's hdfs options and NamenodeFsck's words, with a
// real fault: the only datanode holding /lost's block is stopped, leaving
// the block missing and /ok (replication 2) under-replicated. -files
// -blocks -locations list each file, block and replica; without -files
// only the problems are printed; -racks names replicas /rack/ip:port;
// -list-corruptfileblocks lists the missing block; -delete removes /lost
// and the next fsck is healthy.
func TestFsckOptions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2})
	ctx := context.Background()
	fsys := c.Client(t)
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	sh := &fsshell.Shell{FS: fsys, Out: out, Err: errOut, Progress: fsshell.ProgressNever}
	write := func(p string, repl int) {
		t.Helper()
		fw, err := fsys.Create(ctx, p, client.CreateOptions{Replication: repl})
		must(t, err)
		_, err = fw.Write([]byte("data of " + p))
		must(t, err)
		must(t, fw.Close())
	}
	must(t, fsys.Mkdir(ctx, "/d", 0o755, false))
	write("/d/ok", 2)
	write("/d/lost", 1)
	// Close returns once one replica is reported (the minimum); the
	// healthy fsck below needs the second datanode's report too.
	c.WaitReplication(t, "/d/ok", 2)
	r, err := fsys.Fsck(ctx, "/d/lost")
	must(t, err)
	holder := r.GetFiles()[0].GetBlocks()[0].GetLiveReplicas()[0]
	lostBlk := r.GetFiles()[0].GetBlocks()[0].GetBlock()

	// Healthy, every option.
	out.Reset()
	must(t, sh.Fsck(ctx, "/d", fsshell.FsckOptions{Files: true, Blocks: true, Locations: true}))
	dns, err := fsys.Datanodes(ctx, dfspb.DatanodeState_LIVE)
	must(t, err)
	addr := map[string]string{}
	for _, d := range dns {
		addr[d.GetId()] = fmt.Sprintf("%s:%d", d.GetIpAddr(), d.GetDataPort())
	}
	for _, want := range []string{
		"/d <dir>\n/d/lost 15 bytes, replicated: replication=1, 1 block(s):  OK\n",
		fmt.Sprintf("0. blk_%d_%d len=15 Live_repl=1  [%s]\n\n", lostBlk.GetBlockId(), lostBlk.GetGenerationStamp(), addr[holder]),
		"/d/ok 13 bytes, replicated: replication=2, 1 block(s):  OK\n",
		"\n\nThe filesystem under path '/d' is HEALTHY\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("fsck -files -blocks -locations lacks %q:\n%s", want, out)
		}
	}

	// The fault: stop the one holder of /lost's block.
	for i := 0; i < 2; i++ {
		if c.DataNode(i) != nil && c.DataNode(i).ID() == holder {
			c.StopDataNode(i)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := fsys.Fsck(ctx, "/d")
		must(t, err)
		if r.GetMissing() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for the namenode to count /d/lost's block missing after its datanode stopped: %+v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out.Reset()
	err = sh.Fsck(ctx, "/d", fsshell.FsckOptions{})
	s := out.String()
	if err == nil || !strings.Contains(s, "\n/d/lost: MISSING 1 blocks of total size 15 B.") ||
		!strings.Contains(s, "\n/d/ok:  Under replicated blk_") || !strings.Contains(s, "Target Replicas is 2 but found 1 live replica(s)") ||
		strings.Contains(s, "bytes, replicated") || !strings.HasSuffix(s, "The filesystem under path '/d' is CORRUPT\n") {
		t.Fatalf("fsck without options after the fault (err %v):\n%s", err, s)
	}
	out.Reset()
	_ = sh.Fsck(ctx, "/d", fsshell.FsckOptions{Files: true, Blocks: true, Racks: true})
	s = out.String()
	if !strings.Contains(s, "/d/lost 15 bytes, replicated: replication=1, 1 block(s):  MISSING 1 blocks of total size 15 B\n") ||
		!strings.Contains(s, " len=15 MISSING!\n") || !strings.Contains(s, "Live_repl=1  [/default-rack/") {
		t.Fatalf("fsck -files -blocks -racks after the fault:\n%s", s)
	}
	out.Reset()
	err = sh.Fsck(ctx, "/", fsshell.FsckOptions{ListCorrupt: true})
	want := fmt.Sprintf("The list of corrupt files under path '/' are:\nblk_%d\t/d/lost\nThe filesystem under path '/' has 1 CORRUPT files\n", lostBlk.GetBlockId())
	if err == nil || out.String() != want {
		t.Fatalf("fsck -list-corruptfileblocks (err %v):\n%q\nwant\n%q", err, out, want)
	}
	out.Reset()
	if err := sh.Fsck(ctx, "/d", fsshell.FsckOptions{Delete: true}); err == nil {
		t.Fatal("fsck -delete reported the run that found the missing block healthy")
	}
	if _, err := fsys.Stat(ctx, "/d/lost"); err == nil {
		t.Fatal("fsck -delete left /d/lost")
	}
	if _, err := fsys.Stat(ctx, "/d/ok"); err != nil {
		t.Fatalf("fsck -delete touched the under-replicated /d/ok: %v", err)
	}
	out.Reset()
	must(t, sh.Fsck(ctx, "/", fsshell.FsckOptions{ListCorrupt: true}))
	if out.String() != "The filesystem under path '/' has 0 CORRUPT files\n" {
		t.Fatalf("after -delete: %q", out)
	}
}

// TestFsckHeaderAndOpenFiles: fsck starts with NamenodeFsck's line
// "FSCK started by USER (auth:SIMPLE) from /IP for path P at DATE" and
// says when it ended; a file still being written is left out unless
// -openforwrite, which checks it, marks it OPENFORWRITE and counts it in
// "Files currently being written", as HDFS's fsck does.
func TestFsckHeaderAndOpenFiles(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	fsys := c.Client(t, testcluster.WithUser("alice"))
	must(t, c.Client(t).SetPermission(ctx, "/", 0o777))
	out := &bytes.Buffer{}
	sh := &fsshell.Shell{FS: fsys, Out: out, Err: out, Progress: fsshell.ProgressNever}
	must(t, fsys.Mkdir(ctx, "/f", 0o755, false))
	done, err := fsys.Create(ctx, "/f/done", client.CreateOptions{})
	must(t, err)
	_, err = done.Write([]byte("closed"))
	must(t, err)
	must(t, done.Close())
	w, err := fsys.Create(ctx, "/f/open", client.CreateOptions{})
	must(t, err)
	defer w.Close()
	_, err = w.Write([]byte("still being written"))
	must(t, err)

	header := regexp.MustCompile(`^FSCK started by alice \(auth:SIMPLE\) from /[0-9.:a-f]+ for path /f at [A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}\n`)
	must(t, sh.Fsck(ctx, "/f", fsshell.FsckOptions{Files: true}))
	if got := out.String(); !header.MatchString(got) || strings.Contains(got, "/f/open") || !strings.Contains(got, " Total files:\t1\n") ||
		!regexp.MustCompile(`\nFSCK ended at .* in \d+ milliseconds\n\n\nThe filesystem under path '/f' is HEALTHY\n$`).MatchString(got) {
		t.Fatalf("fsck -files without -openforwrite:\n%s", got)
	}
	out.Reset()
	must(t, sh.Fsck(ctx, "/f", fsshell.FsckOptions{Files: true, OpenForWrite: true}))
	if got := out.String(); !regexp.MustCompile(`\n/f/open \d+ bytes, replicated: replication=1, \d+ block\(s\), OPENFORWRITE: `).MatchString(got) ||
		!strings.Contains(got, " Total files:\t2 (Files currently being written: 1)\n") {
		t.Fatalf("fsck -files -openforwrite:\n%s", got)
	}
}

// TestFsckMoveCopiesReadableRuns: with a real fault (the datanode holding
// the first block of a 6-block file of replication 1 stopped), fsck
// -move copies each run of consecutive readable blocks to
// /lost+found/PATH/0, 1, ... byte for byte, as HDFS's fsck does, leaves
// the corrupt file in place, and refuses to copy over remains already
// there; -move -delete then removes the file.
func TestFsckMoveCopiesReadableRuns(t *testing.T) {
	const bs = 1 << 20
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2, BlockSize: bs})
	ctx := context.Background()
	fsys := c.Client(t)
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	sh := &fsshell.Shell{FS: fsys, Out: out, Err: errOut, Progress: fsshell.ProgressNever}
	must(t, fsys.Mkdir(ctx, "/d", 0o755, false))
	// Blocks land on either datanode; write until both hold some, so
	// stopping one leaves readable and unreadable blocks.
	var data []byte
	var holders []string
	for try := 0; ; try++ {
		data = make([]byte, 6*bs)
		for i := range data {
			data[i] = byte(i*7 + i/bs + try)
		}
		fw, err := fsys.Create(ctx, "/d/f", client.CreateOptions{Replication: 1, Overwrite: true})
		must(t, err)
		_, err = fw.Write(data)
		must(t, err)
		must(t, fw.Close())
		r, err := fsys.Fsck(ctx, "/d/f")
		must(t, err)
		holders = holders[:0]
		for _, b := range r.GetFiles()[0].GetBlocks() {
			holders = append(holders, b.GetLiveReplicas()[0])
		}
		mixed := false
		for _, h := range holders {
			mixed = mixed || h != holders[0]
		}
		if mixed {
			break
		}
		if try == 5 {
			t.Fatalf("six writes put every block of /d/f on one datanode: %v", holders)
		}
	}
	stopped := holders[0]
	for i := 0; i < 2; i++ {
		if c.DataNode(i) != nil && c.DataNode(i).ID() == stopped {
			c.StopDataNode(i)
		}
	}
	// The runs fsck must copy: blocks not on the stopped datanode.
	var runs [][]byte
	inRun := false
	for i, h := range holders {
		if h == stopped {
			inRun = false
			continue
		}
		if !inRun {
			runs = append(runs, nil)
			inRun = true
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], data[i*bs:(i+1)*bs]...)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := fsys.Fsck(ctx, "/d")
		must(t, err)
		if r.GetMissing() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for the namenode to count /d/f's blocks on %s missing: %+v", stopped, r)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := sh.Fsck(ctx, "/d", fsshell.FsckOptions{Move: true}); err == nil {
		t.Fatalf("fsck -move reported the run that found missing blocks healthy:\n%s", out)
	}
	for i, want := range runs {
		p := fmt.Sprintf("/lost+found/d/f/%d", i)
		r, err := fsys.Open(ctx, p)
		if err != nil {
			t.Fatalf("fsck -move (blocks by holder %v, %s stopped): %v\nstderr: %s", holders, stopped, err, errOut)
		}
		var got bytes.Buffer
		_, err = got.ReadFrom(r)
		r.Close()
		must(t, err)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: %d bytes, want the %d bytes of run %d (holders %v)", p, got.Len(), len(want), i, holders)
		}
	}
	if _, err := fsys.Stat(ctx, fmt.Sprintf("/lost+found/d/f/%d", len(runs))); err == nil {
		t.Fatalf("fsck -move made more than the %d runs of readable blocks (holders %v)", len(runs), holders)
	}
	if !strings.Contains(errOut.String(), "copied the remains of the corrupted file /d/f to /lost+found") {
		t.Fatalf("fsck -move said: %q", errOut)
	}
	if _, err := fsys.Stat(ctx, "/d/f"); err != nil {
		t.Fatalf("fsck -move without -delete removed /d/f: %v", err)
	}
	// Again: the remains are there, so nothing is copied over them; with
	// -delete the corrupt file goes.
	errOut.Reset()
	_ = sh.Fsck(ctx, "/d", fsshell.FsckOptions{Move: true, Delete: true})
	if !strings.Contains(errOut.String(), "because /lost+found/d/f already exists") {
		t.Fatalf("fsck -move over existing remains said: %q", errOut)
	}
	if _, err := fsys.Stat(ctx, "/d/f"); err == nil {
		t.Fatal("fsck -move -delete left /d/f")
	}
}
