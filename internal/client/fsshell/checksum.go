package fsshell

import (
	"context"
	"fmt"

	"smarth/internal/client"
)

// Checksum prints each file's HDFS composite checksum as hdfs dfs
// -checksum does: "PATH\tALGORITHM\tHEX"; a directory is an error ("Is a
// directory").
// The value depends on the bytes, the block size and the bytes per
// checksum, and equals what HDFS gives for the same three.
func (s *Shell) Checksum(ctx context.Context, args []string) error {
	return s.eachPath(ctx, "checksum", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("checksum", p, err)
		}
		if st.IsDir { // as hdfs dfs -checksum: PathIsDirectoryException
			return fail("checksum", p, client.ErrIsDir)
		}
		sum, err := s.FS.FileChecksum(ctx, p)
		if err != nil {
			return fail("checksum", p, err)
		}
		fmt.Fprintf(s.Out, "%s\t%s\t%s\n", s.show(p), sum.Algorithm(), sum)
		return nil
	})
}
