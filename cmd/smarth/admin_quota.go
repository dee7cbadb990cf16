package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/rpc/dfspb"
)

// Quota sentinels of SetQuotaRequest (HDFS HdfsConstants).
const (
	quotaReset   int64 = -1
	quotaDontSet int64 = math.MaxInt64
)

// newAdminQuotaCmds are hdfs dfsadmin's -setQuota, -clrQuota,
// -setSpaceQuota and -clrSpaceQuota: each takes several directories, goes
// on past a failing one and fails at the end if any did.
func newAdminQuotaCmds(a *adminConn) []*cobra.Command {
	set := func(name, short, example string, space bool) *cobra.Command {
		return &cobra.Command{
			Use: name + " QUOTA DIR...", Short: short, Example: example, Args: cobra.MinimumNArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				q, err := parseQuota(args[0], space)
				if err != nil {
					return usageErr("%s: %v", name, err)
				}
				ns, ds := q, quotaDontSet
				if space {
					ns, ds = quotaDontSet, q
				}
				return a.setQuotas(cmd, name, args[1:], ns, ds)
			},
		}
	}
	clr := func(name, short, example string, space bool) *cobra.Command {
		return &cobra.Command{
			Use: name + " DIR...", Short: short, Example: example, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ns, ds := quotaReset, quotaDontSet
				if space {
					ns, ds = quotaDontSet, quotaReset
				}
				return a.setQuotas(cmd, name, args, ns, ds)
			},
		}
	}
	return []*cobra.Command{
		set("setQuota", "Limit the number of names (files and directories, itself included) under directories",
			"  smarth admin setQuota 10000 /user/alice /user/bob", false),
		clr("clrQuota", "Remove the name quota of directories", "  smarth admin clrQuota /user/alice", false),
		set("setSpaceQuota", "Limit the bytes (times replication) under directories; QUOTA may end in k, m, g, t, p or e",
			"  smarth admin setSpaceQuota 10g /user/alice", true),
		clr("clrSpaceQuota", "Remove the space quota of directories", "  smarth admin clrSpaceQuota /user/alice", true),
	}
}

// setQuotas applies one quota change to each directory, reporting each
// failure as "NAME: message" and failing at the end if any did.
func (a *adminConn) setQuotas(cmd *cobra.Command, name string, dirs []string, ns, ds int64) error {
	failed := 0
	for _, d := range dirs {
		ctx, cancel := a.ctx(cmd)
		_, err := a.rpc.SetQuota(ctx, &dfspb.SetQuotaRequest{Path: d, NsQuota: ns, DsQuota: ds})
		cancel()
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", name, a.explain(err))
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: %d of %d directories failed", name, failed, len(dirs)), quiet: true}
	}
	return nil
}

// parseQuota reads a positive quota; a space quota may carry a binary
// suffix (k, m, g, t, p, e; any case), as HDFS's string2long reads it.
func parseQuota(s string, space bool) (int64, error) {
	mult := int64(1)
	num := s
	if space && s != "" {
		if i := strings.IndexByte("kmgtpe", byte(strings.ToLower(s[len(s)-1:])[0])); i >= 0 {
			mult, num = int64(1)<<(10*(i+1)), s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a positive integer", s)
	}
	return n * mult, nil
}
