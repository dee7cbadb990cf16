package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/rpc/dfspb"
)

// Snapshot administration and storage policies, as hdfs dfsadmin
// -allowSnapshot/-disallowSnapshot, hdfs lsSnapshottableDir, hdfs
// snapshotDiff and hdfs storagepolicies.
func newAdminFeatureCmds(a *adminConn) []*cobra.Command {
	allow := &cobra.Command{
		Use: "allowSnapshot DIR", Short: "Let snapshots be taken of a directory (superusers only; not nested)",
		Example: "  smarth admin allowSnapshot /data", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			if _, err := a.rpc.AllowSnapshot(ctx, &dfspb.AllowSnapshotRequest{SnapshotRoot: args[0]}); err != nil {
				return fmt.Errorf("allowSnapshot: %w", a.explain(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Allowing snapshot on %s succeeded\n", args[0])
			return nil
		},
	}
	disallow := &cobra.Command{
		Use: "disallowSnapshot DIR", Short: "Stop snapshots of a directory; it must have none left",
		Example: "  smarth admin disallowSnapshot /data", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			if _, err := a.rpc.DisallowSnapshot(ctx, &dfspb.DisallowSnapshotRequest{SnapshotRoot: args[0]}); err != nil {
				return fmt.Errorf("disallowSnapshot: %w", a.explain(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Disallowing snapshot on %s succeeded\n", args[0])
			return nil
		},
	}
	ls := &cobra.Command{
		Use:   "lsSnapshottableDir",
		Short: "List snapshottable directories (all for a superuser, else your own)",
		Long: `List snapshottable directories as hdfs lsSnapshottableDir: mode, replication
(0), owner, group, length (0), modification time, number of snapshots,
snapshot limit, path.`,
		Example: "  smarth admin lsSnapshottableDir", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			r, err := a.rpc.GetSnapshottableDirListing(ctx, &dfspb.GetSnapshottableDirListingRequest{})
			if err != nil {
				return fmt.Errorf("lsSnapshottableDir: %w", a.explain(err))
			}
			for _, d := range r.GetSnapshottableDirs() {
				st := d.GetDirStatus()
				fmt.Fprintf(cmd.OutOrStdout(), "d%s 0 %s %s 0 %s %d %d %s\n", fsshell.PermString(client.ModeOf(st.GetPermission())),
					st.GetOwner(), st.GetGroup(), time.UnixMilli(st.GetModificationTimeMs()).Local().Format("2006-01-02 15:04"),
					d.GetSnapshotNumber(), d.GetSnapshotQuota(), st.GetPath())
			}
			return nil
		},
	}
	diff := &cobra.Command{
		Use:   "snapshotDiff DIR FROM TO",
		Short: "Show what changed in a directory between two snapshots (\".\" is now)",
		Long: `Compare two snapshots of a snapshottable directory, or a snapshot and the
current state ("."), as hdfs snapshotDiff: one line per change, "M" modified,
"+" created, "-" deleted, "R" renamed (OLD -> NEW), paths relative to DIR.`,
		Example: "  smarth admin snapshotDiff /data s0 s1\n  smarth admin snapshotDiff /data s0 .", Args: exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			r, err := a.rpc.GetSnapshotDiffReport(ctx, &dfspb.GetSnapshotDiffReportRequest{SnapshotRoot: args[0], FromSnapshot: args[1], ToSnapshot: args[2]})
			if err != nil {
				return fmt.Errorf("snapshotDiff: %w", a.explain(err))
			}
			var entries []client.DiffEntry
			for _, e := range r.GetDiffReport().GetDiffReportEntries() {
				entries = append(entries, client.DiffEntry{Kind: e.GetModificationLabel(), Path: e.GetFullpath(), Target: e.GetTargetPath()})
			}
			fsshell.PrintSnapshotDiff(cmd.OutOrStdout(), r.GetDiffReport().GetSnapshotRoot(), args[1], args[2], entries)
			return nil
		},
	}
	return []*cobra.Command{allow, disallow, ls, diff, newAdminStoragePoliciesCmd(a)}
}

func policyOfProto(p *dfspb.BlockStoragePolicy) client.StoragePolicy {
	return client.StoragePolicy{ID: uint8(p.GetPolicyId()), Name: p.GetName(), StorageTypes: p.GetCreationPolicy(),
		CreationFallbacks: p.GetCreationFallbackPolicy(), ReplicationFallbacks: p.GetReplicationFallbackPolicy()}
}

func newAdminStoragePoliciesCmd(a *adminConn) *cobra.Command {
	var list, set, get, unset bool
	var path, policy string
	c := &cobra.Command{
		Use:   "storagepolicies {-listPolicies | -setStoragePolicy -path PATH -policy POLICY | -getStoragePolicy -path PATH | -unsetStoragePolicy -path PATH}",
		Short: "List, set, get or unset block storage policies (stored only: placement does not act on them yet)",
		Long: `Block storage policies as hdfs storagepolicies: HOT (the default), COLD, WARM,
ALL_SSD, ONE_SSD, LAZY_PERSIST and PROVIDED, with HDFS's ids. A file or
directory without a policy of its own has its nearest ancestor's.

In smarth a storage policy is a stored attribute only: it is kept, inherited,
journaled and reported, but block placement does not act on it yet (every
datanode volume is treated as DISK).`,
		Example: `  smarth admin storagepolicies -listPolicies
  smarth admin storagepolicies -setStoragePolicy -path /archive -policy COLD
  smarth admin storagepolicies -getStoragePolicy -path /archive/2020
  smarth admin storagepolicies -unsetStoragePolicy -path /archive`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "listPolicies", "setStoragePolicy", "getStoragePolicy", "unsetStoragePolicy", "path", "policy")
			if help || err != nil {
				return err
			}
			n := 0
			for _, on := range []bool{list, set, get, unset} {
				if on {
					n++
				}
			}
			switch {
			case len(args) > 0:
				return usageErr("storagepolicies: unexpected argument %q; usage: %s", args[0], cmd.UseLine())
			case n != 1:
				return usageErr("storagepolicies: give one of -listPolicies, -setStoragePolicy, -getStoragePolicy, -unsetStoragePolicy; usage: %s", cmd.UseLine())
			case !list && path == "":
				return usageErr("storagepolicies: -path is required; usage: %s", cmd.UseLine())
			case set && policy == "":
				return usageErr("storagepolicies: -policy is required; usage: %s", cmd.UseLine())
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			out := cmd.OutOrStdout()
			switch {
			case list:
				r, err := a.rpc.GetStoragePolicies(ctx, &dfspb.GetStoragePoliciesRequest{})
				if err != nil {
					return fmt.Errorf("listPolicies: %w", a.explain(err))
				}
				fmt.Fprintln(out, "Block Storage Policies:")
				for _, p := range r.GetPolicies() {
					fmt.Fprintf(out, "\t%s\n", fsshell.PolicyString(policyOfProto(p)))
				}
			case set:
				if _, err := a.rpc.SetStoragePolicy(ctx, &dfspb.SetStoragePolicyRequest{Src: path, PolicyName: strings.ToUpper(policy)}); err != nil {
					return fmt.Errorf("setStoragePolicy: %w", a.explain(err))
				}
				fmt.Fprintf(out, "Set storage policy %s on %s\n", strings.ToUpper(policy), path)
			case unset:
				if _, err := a.rpc.UnsetStoragePolicy(ctx, &dfspb.UnsetStoragePolicyRequest{Src: path}); err != nil {
					return fmt.Errorf("unsetStoragePolicy: %w", a.explain(err))
				}
				fmt.Fprintf(out, "Unset storage policy from %s\n", path)
			case get:
				r, err := a.rpc.GetStoragePolicy(ctx, &dfspb.GetStoragePolicyRequest{Path: path})
				if err != nil {
					return fmt.Errorf("getStoragePolicy: %w", a.explain(err))
				}
				if r.GetStoragePolicy() == nil {
					fmt.Fprintf(out, "The storage policy of %s is unspecified\n", path)
				} else {
					fmt.Fprintf(out, "The storage policy of %s:\n%s\n", path, fsshell.PolicyString(policyOfProto(r.GetStoragePolicy())))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&list, "listPolicies", false, "list the policies")
	c.Flags().BoolVar(&set, "setStoragePolicy", false, "set the policy of -path to -policy")
	c.Flags().BoolVar(&get, "getStoragePolicy", false, "print the policy in effect at -path")
	c.Flags().BoolVar(&unset, "unsetStoragePolicy", false, "remove the policy set on -path")
	c.Flags().StringVar(&path, "path", "", "file or directory")
	c.Flags().StringVar(&policy, "policy", "", "policy name")
	c.Flags().Bool("help", false, "help for storagepolicies")
	return c
}
