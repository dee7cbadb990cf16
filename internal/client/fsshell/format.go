package fsshell

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"smarth/internal/client"
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
// entry of a directory, or one summary line per path with summary. As hdfs
// dfs -du, the lines of every path form one table, aligned together and
// printed at the end (errors come first), under a header with -v.
func (s *Shell) Du(ctx context.Context, paths []string, summary, human, header bool) error {
	size := func(n int64) string {
		if human {
			return HumanBytes(n)
		}
		return strconv.FormatInt(n, 10)
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	if header {
		fmt.Fprintf(tw, "SIZE\tDISK_SPACE_CONSUMED_WITH_ALL_REPLICAS\tFULL_PATH_NAME\n")
	}
	err := s.eachPath(ctx, "du", paths, func(p string) error {
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
		for _, t := range targets {
			cs, err := s.FS.ContentSummary(ctx, t.Path)
			if err != nil {
				return fail("du", t.Path, err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", size(cs.Length), size(cs.SpaceConsumed), s.show(t.Path))
		}
		return nil
	})
	if ferr := tw.Flush(); ferr != nil {
		return ferr
	}
	if _, werr := s.Out.Write(table.Bytes()); werr != nil {
		return werr
	}
	return err
}
