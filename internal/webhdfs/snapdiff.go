package webhdfs

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"smarth/internal/rpc/dfspb"
)

// snapshotDiffListingLimit is a GETSNAPSHOTDIFFLISTING page (HDFS's
// dfs.namenode.snapshotdiff.listing.limit).
var snapshotDiffListingLimit = 1000

// listingEntry is one DiffReportListingEntry: kind is the list it goes
// in ("modify", "create" or "delete").
type listingEntry struct {
	kind          string
	dirID, fileID int64
	source        string
	target        *string
	reference     bool
}

func (e listingEntry) json() map[string]any {
	m := map[string]any{"dirId": e.dirID, "fileId": e.fileID, "sourcePath": e.source, "isReference": e.reference}
	if e.target != nil {
		m["targetPath"] = *e.target
	}
	return m
}

// snapshotDiffListing answers GETSNAPSHOTDIFFLISTING, the iterative
// snapshot diff WebHdfsFileSystem.getSnapshotDiffReport uses between two
// named snapshots. It is built over the namenode's whole-report diff RPC
// and laid out as HDFS's SnapshotDiffListingInfo lays it out, so the
// client's SnapshotDiffReportGenerator rebuilds the same report:
//   - a changed directory is a modify entry with isReference=true and
//     dirId=fileId=its id; its created and deleted children carry that id
//     as dirId (the generator only emits children under such an entry);
//   - a changed file is a modify entry with isReference=false;
//   - a rename is a delete entry (isReference, targetPath) plus a create
//     entry (isReference) with the same fileId.
//
// The RPC carries no inode ids, so ids number the report's paths: the
// same path has the same id throughout a report, which is all the
// generator uses them for. The cursor is this report's own: lastPath is
// the last entry sent and lastIndex the position of the next one; ""
// and -1 mark the end, as in HDFS.
func (c *call) snapshotDiffListing() error {
	from, to := c.p.Str("oldsnapshotname"), c.p.Str("snapshotname")
	start := c.p.Str("snapshotdiffstartpath")
	index, err := c.p.Long("snapshotdiffindex", -1, -1)
	if err != nil {
		return err
	}
	r, err := c.h.cfg.RPC.GetSnapshotDiffReport(c.ctx, &dfspb.GetSnapshotDiffReportRequest{SnapshotRoot: c.path, FromSnapshot: from, ToSnapshot: to})
	if err != nil {
		return err
	}
	earlier, err := c.fromEarlier(from, to)
	if err != nil {
		return err
	}
	all := listingEntries(r.GetDiffReport().GetDiffReportEntries(), earlier)
	first := max(index, 0)
	if first > int64(len(all)) || (first > 0 && all[first-1].source != start) {
		return Exception("SnapshotException", fmt.Sprintf(
			"snapshotdiffstartpath %q and snapshotdiffindex %d do not continue the diff of %s from %s to %s; start again without them",
			start, index, c.path, from, to))
	}
	end := min(first+int64(snapshotDiffListingLimit), int64(len(all)))
	lists := map[string][]map[string]any{"modify": {}, "create": {}, "delete": {}}
	for _, e := range all[first:end] {
		lists[e.kind] = append(lists[e.kind], e.json())
	}
	lastPath, lastIndex := "", int64(-1)
	if end < int64(len(all)) {
		lastPath, lastIndex = all[end-1].source, end
	}
	return c.json(map[string]any{"SnapshotDiffReportListing": map[string]any{
		"modifyList": lists["modify"], "createList": lists["create"], "deleteList": lists["delete"],
		"lastPath": lastPath, "lastIndex": lastIndex, "isFromEarlier": earlier,
	}})
}

// fromEarlier: the diff runs from an older to a newer state (snapshots
// are listed oldest first; "" and "." are the current state).
func (c *call) fromEarlier(from, to string) (bool, error) {
	current := func(s string) bool { return s == "" || s == "." }
	if current(to) || current(from) {
		return !current(from) || current(to), nil
	}
	dirs, err := c.snapshottable()
	if err != nil {
		return false, err
	}
	for _, d := range dirs {
		if d.GetDirStatus().GetPath() == c.path {
			names := d.GetSnapshotNames()
			return slices.Index(names, from) <= slices.Index(names, to), nil
		}
	}
	return true, nil
}

// listingEntries lays a report out as HDFS's listing. HDFS's lists are
// kept from the earlier snapshot's view and the client flips created and
// deleted when isFromEarlier is false, so a report computed from a later
// snapshot is flipped back here.
func listingEntries(report []*dfspb.SnapshotDiffReportEntry, earlier bool) []listingEntry {
	ids := map[string]int64{}
	id := func(p string) int64 {
		if v, ok := ids[p]; ok {
			return v
		}
		ids[p] = int64(len(ids) + 1)
		return ids[p]
	}
	parent := func(p string) string {
		if !strings.Contains(p, "/") {
			return ""
		}
		return path.Dir(p)
	}
	var out []listingEntry
	modified := map[string]bool{}
	modifyDir := func(p string) {
		if !modified[p] {
			modified[p] = true
			out = append(out, listingEntry{kind: "modify", dirID: id(p), fileID: id(p), source: p, reference: true})
		}
	}
	// Directories that have created or deleted children are modify
	// entries with isReference; other modified paths are files.
	dirs := map[string]bool{}
	for _, e := range report {
		if l := e.GetModificationLabel(); l != "M" {
			dirs[parent(diffPath(e.GetFullpath()))] = true
			if l == "R" {
				dirs[parent(diffPath(e.GetTargetPath()))] = true
			}
		}
	}
	for _, e := range report {
		src, label := diffPath(e.GetFullpath()), e.GetModificationLabel()
		if !earlier {
			switch label {
			case "+":
				label = "-"
			case "-":
				label = "+"
			}
		}
		switch label {
		case "M":
			if dirs[src] {
				modifyDir(src)
			} else {
				out = append(out, listingEntry{kind: "modify", dirID: id(parent(src)), fileID: id(src), source: src})
			}
		case "+", "-":
			modifyDir(parent(src))
			kind := map[string]string{"+": "create", "-": "delete"}[label]
			out = append(out, listingEntry{kind: kind, dirID: id(parent(src)), fileID: id(src), source: src})
		case "R":
			dst := diffPath(e.GetTargetPath())
			if !earlier {
				src, dst = dst, src
			}
			modifyDir(parent(src))
			modifyDir(parent(dst))
			fid := id(src)
			out = append(out,
				listingEntry{kind: "delete", dirID: id(parent(src)), fileID: fid, source: src, target: &dst, reference: true},
				listingEntry{kind: "create", dirID: id(parent(dst)), fileID: fid, source: dst, reference: true})
		}
	}
	return out
}
