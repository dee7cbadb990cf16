package fsshell

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
)

// FsckOptions are hdfs fsck's flags.
type FsckOptions struct {
	Files       bool // -files: a line per file and directory
	Blocks      bool // -blocks: with -files, each block
	Locations   bool // -locations: with -blocks, each block's replicas
	Racks       bool // -racks: the replicas as /rack/ip:port
	ListCorrupt bool // -list-corruptfileblocks: only the blocks without a live replica and their files
	Delete      bool // -delete: delete the files with such blocks
	// Move (-move) copies what can still be read of each corrupt file to
	// /lost+found: every run of consecutive blocks with a live replica
	// becomes a file /lost+found/PATH/0, 1, ..., as HDFS's fsck does. The
	// corrupt file stays unless -delete is given too.
	Move bool
	// OpenForWrite (-openforwrite) checks files still being written too;
	// without it they are left out, as HDFS leaves them out.
	OpenForWrite bool
}

// javaDate is java.util.Date's toString, which HDFS's fsck prints.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// fsckHeader is NamenodeFsck's first line: "FSCK started by alice
// (auth:SIMPLE) from /127.0.0.1 for path /d at Sun Nov 29 ...". The
// address is this host's on the route to the namenode (a UDP "dial"
// sends nothing), as the namenode would see the caller.
func (s *Shell) fsckHeader(p string, now time.Time) string {
	method := "SIMPLE"
	if s.FS.HasCredential() {
		method = "TOKEN"
	}
	from := ""
	nn, _, _ := strings.Cut(s.FS.NameNodeAddr(), ",")
	if c, err := net.Dial("udp", nn); err == nil {
		if a, ok := c.LocalAddr().(*net.UDPAddr); ok {
			from = " from /" + a.IP.String()
		}
		c.Close()
	}
	return fmt.Sprintf("FSCK started by %s (auth:%s)%s for path %s at %s\n", s.FS.User(), method, from, p, now.Format(javaDate))
}

// Fsck reports the health of the files under p in HDFS's NamenodeFsck
// words: with -files "PATH LEN bytes, replicated: replication=R, K
// block(s):  OK", with -blocks "0. blk_ID_GS len=N Live_repl=R" and the
// replicas with -locations or -racks; problems whatever the options
// ("PATH: MISSING 1 blocks of total size N B.", "Under replicated ...").
// The summary ends with "The filesystem under path 'P' is HEALTHY" (or
// CORRUPT, then the error). A replica is named ip:port, as HDFS 2 did
// (smarth has no storage ids for DatanodeInfoWithStorage), block names
// have no block pool.
func (s *Shell) Fsck(ctx context.Context, p string, o FsckOptions) error {
	fsck := s.FS.Fsck
	if o.Files && !o.ListCorrupt {
		fsck = s.FS.FsckTree
	}
	start := s.now()
	r, err := fsck(ctx, p)
	if err != nil {
		return fail("fsck", p, err)
	}
	if o.ListCorrupt {
		return s.listCorrupt(p, r)
	}
	fmt.Fprint(s.Out, s.fsckHeader(p, start))
	nodes := map[string]*dfspb.DatanodeInfo{}
	if o.Locations || o.Racks {
		if dns, err := s.FS.Datanodes(ctx, dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED); err == nil {
			for _, d := range dns {
				nodes[d.GetId()] = d
			}
		}
	}
	replica := func(id string) string {
		d, ok := nodes[id]
		if !ok {
			return id
		}
		addr := fmt.Sprintf("%s:%d", d.GetIpAddr(), d.GetDataPort())
		if o.Racks {
			rack := d.GetRack()
			if rack == "" {
				rack = "/default-rack"
			}
			return rack + "/" + addr
		}
		return addr
	}
	var files, size, open int64
	var toDelete []string
	var toMove []*dfspb.FsckFile
	for _, f := range r.GetFiles() {
		st := f.GetStatus()
		path := st.GetPath()
		if st.GetType() == dfspb.FileType_DIRECTORY {
			fmt.Fprintf(s.Out, "%s <dir>\n", path) // listed with -files only
			continue
		}
		if st.GetUnderConstruction() {
			if !o.OpenForWrite {
				continue // HDFS checks files being written only with -openforwrite
			}
			open++
		}
		files++
		size += st.GetLength()
		if o.Files {
			open := ":"
			if st.GetUnderConstruction() {
				open = ", OPENFORWRITE:"
			}
			fmt.Fprintf(s.Out, "%s %d bytes, replicated: replication=%d, %d block(s)%s ", path, st.GetLength(), st.GetReplication(), len(f.GetBlocks()), open)
		}
		var report strings.Builder
		missing, corrupt, under := 0, 0, 0
		var missingSize, corruptSize int64
		for i, b := range f.GetBlocks() {
			blk := b.GetBlock()
			name := fmt.Sprintf("blk_%d_%d", blk.GetBlockId(), blk.GetGenerationStamp())
			live := len(b.GetLiveReplicas())
			isCorrupt := live == 0 && len(b.GetCorruptReplicas()) > 0
			isMissing := live == 0 && !isCorrupt
			if isCorrupt {
				corrupt++
				corruptSize += blk.GetNumBytes()
				fmt.Fprintf(s.Out, "\n%s: CORRUPT block blk_%d\n", path, blk.GetBlockId())
			}
			if live > 0 && uint32(live) < b.GetExpected() {
				under++
				if !o.Files {
					fmt.Fprintf(s.Out, "\n%s: ", path)
				}
				fmt.Fprintf(s.Out, " Under replicated %s. Target Replicas is %d but found %d live replica(s), 0 decommissioned replica(s), 0 decommissioning replica(s).\n",
					name, b.GetExpected(), live)
			}
			fmt.Fprintf(&report, "%d. %s len=%d", i, name, blk.GetNumBytes())
			if isMissing {
				missing++
				missingSize += blk.GetNumBytes()
				report.WriteString(" MISSING!")
			} else {
				fmt.Fprintf(&report, " Live_repl=%d", live)
				if o.Locations || o.Racks {
					names := make([]string, live)
					for j, id := range b.GetLiveReplicas() {
						names[j] = replica(id)
					}
					fmt.Fprintf(&report, "  [%s]", strings.Join(names, ", "))
				}
			}
			report.WriteByte('\n')
		}
		if missing > 0 || corrupt > 0 {
			if !o.Files {
				if missing > 0 {
					fmt.Fprintf(s.Out, "\n%s: MISSING %d blocks of total size %d B.", path, missing, missingSize)
				}
				if corrupt > 0 {
					fmt.Fprintf(s.Out, "\n%s: CORRUPT %d blocks of total size %d B.", path, corrupt, corruptSize)
				}
			}
			if o.Move && !st.GetUnderConstruction() {
				toMove = append(toMove, f)
			}
			if o.Delete && !st.GetUnderConstruction() {
				toDelete = append(toDelete, path)
			}
		}
		if o.Files {
			switch {
			case missing > 0 || corrupt > 0:
				if missing > 0 {
					fmt.Fprintf(s.Out, " MISSING %d blocks of total size %d B\n", missing, missingSize)
				}
				if corrupt > 0 {
					fmt.Fprintf(s.Out, " CORRUPT %d blocks of total size %d B\n", corrupt, corruptSize)
				}
			case under == 0:
				fmt.Fprint(s.Out, " OK\n")
			}
			if o.Blocks {
				fmt.Fprint(s.Out, report.String()+"\n")
			}
		}
	}
	// As HDFS: the remains are copied, then the corrupt files go, after
	// they were reported; this run's status still counts them.
	for _, f := range toMove {
		if err := s.toLostFound(ctx, f); err != nil {
			fmt.Fprintln(s.Err, fail("fsck", f.GetStatus().GetPath(), err))
		}
	}
	for _, d := range toDelete {
		if err := s.FS.Delete(ctx, d, false); err != nil {
			fmt.Fprintln(s.Err, fail("fsck", d, err))
		}
	}
	status := map[bool]string{true: "HEALTHY", false: "CORRUPT"}[r.GetHealthy()]
	fmt.Fprintln(s.Out)
	fmt.Fprintf(s.Out, "Status: %s\n", status)
	fmt.Fprintf(s.Out, " Total size:\t%d B (%s)\n", size, HumanBytes(size))
	if o.OpenForWrite {
		fmt.Fprintf(s.Out, " Total files:\t%d (Files currently being written: %d)\n", files, open)
	} else {
		fmt.Fprintf(s.Out, " Total files:\t%d\n", files)
	}
	fmt.Fprintf(s.Out, " Total blocks:\t%d\n", r.GetTotalBlocks())
	fmt.Fprintf(s.Out, " Under-replicated blocks:\t%d\n", r.GetUnderReplicated())
	fmt.Fprintf(s.Out, " Missing blocks:\t%d\n", r.GetMissing())
	fmt.Fprintf(s.Out, " Corrupt blocks:\t%d\n", r.GetCorrupt())
	end := s.now()
	fmt.Fprintf(s.Out, "FSCK ended at %s in %d milliseconds\n", end.Format(javaDate), end.Sub(start).Milliseconds())
	fmt.Fprintf(s.Out, "\n\nThe filesystem under path '%s' is %s\n", p, status)
	if !r.GetHealthy() {
		return fail("fsck", p, fmt.Errorf("%w: the file system under %s is not healthy", client.ErrCorrupt, p))
	}
	return nil
}

// listCorrupt is fsck -list-corruptfileblocks in DFSck's words: each block
// without a live replica as "blk_ID<TAB>PATH", then the count; it fails
// when there is one.
func (s *Shell) listCorrupt(p string, r *dfspb.FsckResponse) error {
	n := 0
	for _, f := range r.GetFiles() {
		for _, b := range f.GetBlocks() {
			if len(b.GetLiveReplicas()) > 0 {
				continue
			}
			n++
			if n == 1 {
				fmt.Fprintf(s.Out, "The list of corrupt files under path '%s' are:\n", p)
			}
			fmt.Fprintf(s.Out, "blk_%d\t%s\n", b.GetBlock().GetBlockId(), f.GetStatus().GetPath())
		}
	}
	fmt.Fprintf(s.Out, "The filesystem under path '%s' has %d CORRUPT files\n", p, n)
	if n > 0 {
		return fail("fsck", p, fmt.Errorf("%w: %d blocks under %s have no live replica", client.ErrCorrupt, n, p))
	}
	return nil
}

// lostFound is where fsck -move copies the remains of corrupt files.
const lostFound = "/lost+found"

// toLostFound copies each run of consecutive readable blocks (a live
// replica) of the corrupt file f to /lost+found/PATH/N, N counting the
// runs from 0, as HDFS's NamenodeFsck.copyBlocksToLostFound does; a
// block without a live replica ends a run. A target that already exists
// is left alone (HDFS: "can't copy the remains ... already exists").
func (s *Shell) toLostFound(ctx context.Context, f *dfspb.FsckFile) error {
	st := f.GetStatus()
	path := st.GetPath()
	target := lostFound + path
	if _, err := s.FS.Stat(ctx, target); err == nil {
		return fmt.Errorf("can't copy the remains of %s to lost+found, because %s already exists", path, target)
	}
	if err := s.FS.Mkdir(ctx, target, fs.FileMode(st.GetPermission()&0o777)|0o700, true); err != nil {
		return fmt.Errorf("failed to move %s to /lost+found: %w", path, err)
	}
	r, err := s.FS.Open(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	var off int64
	chain := 0
	var w *client.FileWriter
	closeRun := func() error {
		if w == nil {
			return nil
		}
		err := w.Close()
		w = nil
		return err
	}
	buf := make([]byte, 1<<20)
	for _, b := range f.GetBlocks() {
		n := int64(b.GetBlock().GetNumBytes())
		start := off
		off += n
		if len(b.GetLiveReplicas()) == 0 {
			if err := closeRun(); err != nil {
				return err
			}
			continue
		}
		if w == nil {
			if w, err = s.FS.Create(ctx, fmt.Sprintf("%s/%d", target, chain), client.CreateOptions{NoCreateParent: true}); err != nil {
				return err
			}
			chain++
		}
		if _, err := io.CopyBuffer(w, io.NewSectionReader(r, start, n), buf); err != nil {
			_ = w.Abort()
			return fmt.Errorf("there were errors copying the remains of the corrupted file %s to /lost+found: %w", path, err)
		}
	}
	if err := closeRun(); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "fsck: copied the remains of the corrupted file %s to /lost+found\n", path)
	return nil
}
