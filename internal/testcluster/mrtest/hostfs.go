package mrtest

import (
	"context"

	"smarth/internal/mapreduce"
)

// HostFS is a LocalFS that reports its blocks on Hosts in turn (block i
// of a file on Hosts[i mod len(Hosts)], rack /r1), so that a cluster
// without a DFS still gives the scheduler data locality to decide on.
// Use it as Options.FS with the same Hosts.
type HostFS struct {
	*mapreduce.LocalFS
	Hosts []string
}

// BlockLocations is the LocalFS's blocks with their hosts set.
func (h HostFS) BlockLocations(ctx context.Context, p string, off, n int64) ([]mapreduce.BlockLocation, error) {
	locs, err := h.LocalFS.BlockLocations(ctx, p, off, n)
	for i := range locs {
		host := h.Hosts[int(locs[i].Offset/h.LocalFS.BlockSize)%len(h.Hosts)]
		locs[i].Hosts, locs[i].Racks = []string{host}, []string{"/r1"}
	}
	return locs, err
}
