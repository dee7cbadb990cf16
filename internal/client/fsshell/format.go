package fsshell

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

// HumanBytes prints n as `hdfs dfs -du -h` and `-ls -h` do (Hadoop's
// TraditionalBinaryPrefix with one decimal, no unit): 0, 512, 1.5 K, 64 M,
// 1 G.
func HumanBytes(n int64) string { return units.FormatHadoop(n, "", 1) }

// Stat prints each path by format, as `hdfs dfs -stat`: %b size, %F
// type, %g group, %n name, %o block size, %r replication, %u owner, %y
// modification time (UTC "2006-01-02 15:04:05"), %Y in ms, %x/%X access
// time, %a octal permissions (with 1 for sticky: 1777), %A symbolic as
// HDFS prints it (rwxrwxrwt, no type letter).
func (s *Shell) Stat(ctx context.Context, format string, paths []string) error {
	if format == "" {
		format = "%y"
	}
	return s.eachPath(ctx, "stat", paths, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("stat", p, err)
		}
		fmt.Fprintln(s.Out, FormatStat(format, st))
		return nil
	})
}

// FormatStat expands a stat format for one entry.
func FormatStat(format string, st client.FileInfo) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '\\' && i+1 < len(format) && format[i+1] == 'n' {
			b.WriteByte('\n')
			i++
			continue
		}
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'b':
			b.WriteString(strconv.FormatInt(st.Size, 10))
		case 'F':
			if st.IsDir {
				b.WriteString("directory")
			} else {
				b.WriteString("regular file")
			}
		case 'g':
			b.WriteString(st.Group)
		case 'n':
			b.WriteString(st.Name)
		case 'o':
			b.WriteString(strconv.FormatInt(st.BlockSize, 10))
		case 'r':
			b.WriteString(strconv.Itoa(st.Replication))
		case 'u':
			b.WriteString(st.Owner)
		case 'y':
			b.WriteString(st.ModTime.UTC().Format("2006-01-02 15:04:05"))
		case 'Y':
			b.WriteString(strconv.FormatInt(st.ModTime.UnixMilli(), 10))
		case 'x':
			b.WriteString(st.AccessTime.UTC().Format("2006-01-02 15:04:05"))
		case 'X':
			b.WriteString(strconv.FormatInt(st.AccessTime.UnixMilli(), 10))
		case 'a':
			b.WriteString(strconv.FormatUint(uint64(client.PermBits(st.Mode)), 8))
		case 'A':
			b.WriteString(PermString(st.Mode))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// Du prints size, space consumed (size x replication) and path for each
// entry of a directory, or one summary line per path with summary.
func (s *Shell) Du(ctx context.Context, paths []string, summary, human bool) error {
	size := func(n int64) string {
		if human {
			return HumanBytes(n)
		}
		return strconv.FormatInt(n, 10)
	}
	return s.eachPath(ctx, "du", paths, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("du", p, err)
		}
		targets := []client.FileInfo{st}
		if st.IsDir && !summary {
			if targets, err = s.FS.List(ctx, st.Path); err != nil {
				return fail("du", p, err)
			}
		}
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		for _, t := range targets {
			cs, err := s.FS.ContentSummary(ctx, t.Path)
			if err != nil {
				return fail("du", t.Path, err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", size(cs.Length), size(cs.SpaceConsumed), s.show(t.Path))
		}
		return tw.Flush()
	})
}

// Fsck prints the blocks of every file under path with their replicas and
// a health summary; it returns an error when the path is not healthy.
func (s *Shell) Fsck(ctx context.Context, p string, verbose bool) error {
	r, err := s.FS.Fsck(ctx, p)
	if err != nil {
		return fail("fsck", p, err)
	}
	names := map[string]string{}
	if dns, err := s.FS.Datanodes(ctx, dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED); err == nil {
		for _, d := range dns {
			names[d.GetId()] = d.GetHostname()
		}
	}
	name := func(id string) string {
		if h, ok := names[id]; ok && h != "" {
			return h
		}
		return id
	}
	var files, size int64
	for _, f := range r.GetFiles() {
		st := f.GetStatus()
		if st.GetType() == dfspb.FileType_DIRECTORY {
			continue
		}
		files++
		size += st.GetLength()
		state := ""
		if st.GetUnderConstruction() {
			state = " (open for write)"
		}
		fmt.Fprintf(s.Out, "%s %d bytes, replication %d, %d block(s)%s:", st.GetPath(), st.GetLength(), st.GetReplication(), len(f.GetBlocks()), state)
		fmt.Fprintln(s.Out, blockHealth(f.GetBlocks()))
		if !verbose {
			continue
		}
		for i, b := range f.GetBlocks() {
			live := make([]string, len(b.GetLiveReplicas()))
			for j, id := range b.GetLiveReplicas() {
				live[j] = name(id)
			}
			line := fmt.Sprintf("  %d. blk_%d_%d len=%d repl=%d/%d [%s]", i, b.GetBlock().GetBlockId(), b.GetBlock().GetGenerationStamp(),
				b.GetBlock().GetNumBytes(), len(b.GetLiveReplicas()), b.GetExpected(), strings.Join(live, ", "))
			if len(b.GetCorruptReplicas()) > 0 {
				c := make([]string, len(b.GetCorruptReplicas()))
				for j, id := range b.GetCorruptReplicas() {
					c[j] = name(id)
				}
				line += " corrupt on [" + strings.Join(c, ", ") + "]"
			}
			fmt.Fprintln(s.Out, line)
		}
	}
	fmt.Fprintln(s.Out)
	fmt.Fprintf(s.Out, "Status: %s\n", map[bool]string{true: "HEALTHY", false: "CORRUPT"}[r.GetHealthy()])
	fmt.Fprintf(s.Out, " Total size:\t%d B (%s)\n", size, HumanBytes(size))
	fmt.Fprintf(s.Out, " Total files:\t%d\n", files)
	fmt.Fprintf(s.Out, " Total blocks:\t%d\n", r.GetTotalBlocks())
	fmt.Fprintf(s.Out, " Under-replicated blocks:\t%d\n", r.GetUnderReplicated())
	fmt.Fprintf(s.Out, " Missing blocks:\t%d\n", r.GetMissing())
	fmt.Fprintf(s.Out, " Corrupt blocks:\t%d\n", r.GetCorrupt())
	if !r.GetHealthy() {
		return fail("fsck", p, fmt.Errorf("%w: the file system under %s is not healthy", client.ErrCorrupt, p))
	}
	return nil
}

func blockHealth(bs []*dfspb.FsckBlock) string {
	under, missing, corrupt := 0, 0, 0
	for _, b := range bs {
		switch live := len(b.GetLiveReplicas()); {
		case live == 0:
			missing++
		case uint32(live) < b.GetExpected():
			under++
		}
		if len(b.GetCorruptReplicas()) > 0 {
			corrupt++
		}
	}
	if under+missing+corrupt == 0 {
		return " OK"
	}
	return fmt.Sprintf(" %d under-replicated, %d missing, %d with corrupt replicas", under, missing, corrupt)
}
