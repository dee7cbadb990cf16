package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
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
		var typ string
		c := &cobra.Command{
			Use: name + " QUOTA DIR...", Short: short, Example: example,
			RunE: func(cmd *cobra.Command, args []string) error {
				args, help, err := a.words(cmd, args, space, &typ)
				if help || err != nil {
					return err
				}
				if len(args) < 2 {
					return usageErr("%s: want QUOTA and at least one DIR; usage: %s", name, cmd.UseLine())
				}
				q, err := parseQuota(args[0], space)
				if err != nil {
					return usageErr("%s: %v", name, err)
				}
				ns, ds := q, quotaDontSet
				if space {
					ns, ds = quotaDontSet, q
				}
				return a.setQuotas(cmd, name, args[1:], ns, ds, typ)
			},
		}
		return quotaFlags(c, space, &typ)
	}
	clr := func(name, short, example string, space bool) *cobra.Command {
		var typ string
		c := &cobra.Command{
			Use: name + " DIR...", Short: short, Example: example,
			RunE: func(cmd *cobra.Command, args []string) error {
				args, help, err := a.words(cmd, args, space, &typ)
				if help || err != nil {
					return err
				}
				if len(args) < 1 {
					return usageErr("%s: want at least one DIR; usage: %s", name, cmd.UseLine())
				}
				ns, ds := quotaReset, quotaDontSet
				if space {
					ns, ds = quotaDontSet, quotaReset
				}
				return a.setQuotas(cmd, name, args, ns, ds, typ)
			},
		}
		return quotaFlags(c, space, &typ)
	}
	return []*cobra.Command{
		set("setQuota", "Limit the number of names (files and directories, itself included) under directories",
			"  smarth admin setQuota 10000 /user/alice /user/bob", false),
		clr("clrQuota", "Remove the name quota of directories", "  smarth admin clrQuota /user/alice", false),
		set("setSpaceQuota", "Limit the bytes (times replication) under directories, or with -storageType those on one storage type; QUOTA may end in k, m, g, t, p or e",
			"  smarth admin setSpaceQuota 10g /user/alice\n  smarth admin setSpaceQuota -storageType DISK 10g /user/alice", true),
		clr("clrSpaceQuota", "Remove the space quota of directories, or with -storageType their quota on that storage type",
			"  smarth admin clrSpaceQuota /user/alice\n  smarth admin clrSpaceQuota -storageType DISK /user/alice", true),
	}
}

// setQuotas applies one quota change to each directory, reporting each
// failure as "NAME: message" and failing at the end if any did.
func (a *adminConn) setQuotas(cmd *cobra.Command, name string, dirs []string, ns, ds int64, typ string) error {
	failed := 0
	for _, d := range dirs {
		ctx, cancel := a.ctx(cmd)
		_, err := a.rpc.SetQuota(ctx, &dfspb.SetQuotaRequest{Path: d, NsQuota: ns, DsQuota: ds, StorageType: typ})
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

// quotaFlags gives the space quota commands hdfs dfsadmin's -storageType
// (written with one dash, so the command parses its own flags: see
// adminConn.words).
func quotaFlags(c *cobra.Command, space bool, typ *string) *cobra.Command {
	c.DisableFlagParsing = true
	if space {
		c.Flags().StringVar(typ, "storageType", "", "the quota of this storage type (DISK, SSD, ARCHIVE, PROVIDED, NVDIMM) instead of the space quota")
	}
	c.Flags().Bool("help", false, "help for "+c.Name())
	return c
}

// words parses a quota command's flags, -storageType with one dash as
// hdfs dfsadmin writes it, and then connects again: the admin command
// connected before this command's flags (--namenode, --user among them)
// were parsed.
func (a *adminConn) words(cmd *cobra.Command, args []string, space bool, typ *string) ([]string, bool, error) {
	var words []string
	if space {
		words = []string{"storageType"}
	}
	args, help, err := hdfsWords(cmd, args, words...)
	if help || err != nil {
		return nil, help, err
	}
	*typ = strings.ToUpper(*typ)
	if *typ != "" && !slices.Contains(storageTypeNames, *typ) {
		return nil, false, usageErr("%s: -storageType %q: want one of %s", cmd.Name(), *typ, strings.Join(storageTypeNames, ", "))
	}
	if a.conn != nil {
		a.conn.Close()
	}
	pre := cmd.Parent().PersistentPreRunE
	return args, false, pre(cmd, args)
}

// storageTypeNames are Hadoop's StorageType names (RAM_DISK too: the
// namenode explains why it takes no quota).
var storageTypeNames = []string{"RAM_DISK", "SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"}

// parseQuota reads a positive quota; a space quota is a size as
// units.ParseSize reads it, which takes HDFS's string2long spellings (a
// binary suffix k, m, g, t, p, e in any case: 10g) and more (10GiB).
func parseQuota(s string, space bool) (int64, error) {
	var n int64
	var err error
	if space {
		n, err = units.ParseSize(s)
	} else {
		n, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer", s)
	}
	return n, nil
}
