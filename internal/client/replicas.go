package client

import (
	"context"
	"io"

	"smarth/internal/rpc/dfspb"
)

// Replica is one replica of one block, read from its own datanode.
type Replica struct {
	BlockID  uint64
	Offset   int64 // of the block's first byte in the file
	Length   int64 // the block's length as the namenode lists it
	Datanode string
	Host     string
	Data     []byte // the replica's bytes, checksums verified; nil with Err
	Err      error  // why this replica could not be read
}

// EachReplica reads every replica the namenode lists of every block of p,
// each from its own datanode and from no other (a reader fails over;
// this does not, so a bad replica shows up as itself), and calls fn with
// each in file order. An error from fn stops the walk and is returned;
// an unreadable replica is not an error here but a Replica with Err.
func (f *FileSystem) EachReplica(ctx context.Context, p string, fn func(Replica) error) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	lbs, err := f.locations(ctx, "read", p, 0, 1<<62)
	if err != nil {
		return err
	}
	for _, lb := range allBlocks(lbs) {
		n := lb.GetBlock().GetNumBytes()
		for _, d := range lb.GetLocations() {
			r := Replica{BlockID: lb.GetBlock().GetBlockId(), Offset: lb.GetOffset(), Length: n, Datanode: d.GetId(), Host: d.GetHostname()}
			r.Data, r.Err = f.readReplica(ctx, lb, d, n)
			if r.Err != nil {
				r.Data = nil
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *FileSystem) readReplica(ctx context.Context, lb *dfspb.LocatedBlock, d *dfspb.DatanodeInfo, n int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	br, err := f.openBlock(lb, d, 0, n)
	if err != nil {
		return nil, err
	}
	defer br.close()
	buf := make([]byte, n)
	got, err := br.read(buf)
	if err == io.EOF && int64(got) == n {
		err = nil
	}
	return buf[:got], err
}
