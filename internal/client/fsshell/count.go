package fsshell

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
)

// CountOptions are `hdfs dfs -count`'s flags.
type CountOptions struct {
	Quotas bool // -q: quota columns first
	Human  bool // -h: sizes like 1.5 K
	Header bool // -v: a header line
	// Types (-t, with -q): only the quota and remaining quota of each of
	// these storage types, in this order; QuotaTypes when -t names none.
	Types []string
}

// QuotaTypes are the storage types that take a quota, in Hadoop's
// StorageType order (RAM_DISK, being transient, takes none): what
// `hdfs dfs -count -q -t` shows by default.
var QuotaTypes = []string{"SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"}

// ParseStorageTypes reads -t's comma-separated list as Hadoop's Count
// does: "" or "all" is every quota type, names are in any case.
func ParseStorageTypes(s string) ([]string, error) {
	if s == "" || strings.EqualFold(s, "all") {
		return QuotaTypes, nil
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.ToUpper(strings.TrimSpace(t))
		if t != "RAM_DISK" && !slices.Contains(QuotaTypes, t) {
			return nil, fmt.Errorf("no storage type %q: want a comma-separated list of %s", t, strings.Join(QuotaTypes, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// Count prints, per path, directories, files and bytes under it in
// Hadoop's ContentSummary columns; with -q first the name quota and what
// remains of it (quota minus directories and files), the space quota and
// what remains of it (minus space consumed), "none" and "inf" where a
// quota is not set, as ContentSummary.toString(true) prints them.
func (s *Shell) Count(ctx context.Context, args []string, o CountOptions) error {
	if o.Quotas && o.Types != nil {
		return s.countTypes(ctx, args, o)
	}
	if o.Header {
		h := ""
		if o.Quotas {
			h = fmt.Sprintf("%12s %15s %15s %15s ", "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
		}
		fmt.Fprintf(s.Out, "%s%12s %12s %18s %s\n", h, "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE", "PATHNAME")
	}
	return s.eachPath(ctx, "count", args, func(p string) error {
		cs, err := s.FS.ContentSummary(ctx, p)
		if err != nil {
			return fail("count", p, err)
		}
		size := strconv.FormatInt(cs.Length, 10)
		if o.Human {
			size = HumanBytes(cs.Length)
		}
		q := ""
		if o.Quotas {
			q = quotaColumns(cs, o.Human)
		}
		fmt.Fprintf(s.Out, "%s%12d %12d %18s %s\n", q, cs.DirectoryCount, cs.FileCount, size, s.show(p))
		return nil
	})
}

// Df prints the capacity of the file system as the datanodes report it
// (live ones only: a dead node's disk holds nothing the cluster can use).
func (s *Shell) Df(ctx context.Context, human bool) error {
	dns, err := s.FS.Datanodes(ctx, dfspb.DatanodeState_LIVE)
	if err != nil {
		return fail("df", "", err)
	}
	var capacity, used, remaining int64
	for _, d := range dns {
		capacity += d.GetCapacity()
		used += d.GetDfsUsed()
		remaining += d.GetRemaining()
	}
	num := func(n int64) string {
		if human {
			return HumanBytes(n)
		}
		return strconv.FormatInt(n, 10)
	}
	pct := "0%"
	if capacity > 0 {
		pct = strconv.FormatInt(used*100/capacity, 10) + "%"
	}
	rows := [][]string{
		{"Filesystem", "Size", "Used", "Available", "Use%"},
		{"hdfs://" + s.FS.NameNodeAddr(), num(capacity), num(used), num(remaining), pct},
	}
	w := make([]int, 5)
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", w[0], r[0])
		for i := 1; i < len(r); i++ {
			fmt.Fprintf(&b, "  %*s", w[i], r[i])
		}
		fmt.Fprintln(s.Out, b.String())
	}
	return nil
}

// quotaColumns are count -q's four quota columns.
// countTypes prints `hdfs dfs -count -q -t`: per path, each storage
// type's quota and what remains of it ("none" and "inf" where none is
// set), then the path, as QuotaUsage.getTypesQuotaUsage.
func (s *Shell) countTypes(ctx context.Context, args []string, o CountOptions) error {
	if o.Header {
		var h strings.Builder
		for _, t := range o.Types {
			fmt.Fprintf(&h, "%13s %17s ", t+"_QUOTA", "REM_"+t+"_QUOTA")
		}
		fmt.Fprintf(s.Out, "%sPATHNAME\n", h.String())
	}
	num := func(n int64) string {
		if o.Human {
			return HumanBytes(n)
		}
		return strconv.FormatInt(n, 10)
	}
	return s.eachPath(ctx, "count", args, func(p string) error {
		cs, err := s.FS.ContentSummary(ctx, p)
		if err != nil {
			return fail("count", p, err)
		}
		var line strings.Builder
		for _, t := range o.Types {
			quota, rem := "none", "inf"
			if tq, ok := cs.TypeQuotas[t]; ok && tq.Quota >= 0 {
				quota, rem = num(tq.Quota), num(tq.Quota-tq.Consumed)
			}
			fmt.Fprintf(&line, "%13s %17s ", quota, rem)
		}
		fmt.Fprintf(s.Out, "%s%s\n", line.String(), s.show(p))
		return nil
	})
}

func quotaColumns(cs client.ContentSummary, human bool) string {
	num := func(n int64) string {
		if human {
			return HumanBytes(n)
		}
		return strconv.FormatInt(n, 10)
	}
	quota, rem, space, remSpace := "none", "inf", "none", "inf"
	if cs.Quota >= 0 {
		quota, rem = num(cs.Quota), num(cs.Quota-cs.DirectoryCount-cs.FileCount)
	}
	if cs.SpaceQuota >= 0 {
		space, remSpace = num(cs.SpaceQuota), num(cs.SpaceQuota-cs.SpaceConsumed)
	}
	return fmt.Sprintf("%12s %15s %15s %15s ", quota, rem, space, remSpace)
}
