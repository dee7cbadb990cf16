package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/testbed"
)

func newTestbedPartitionCmd(f *testbedFlags) *cobra.Command {
	var name string
	var hold time.Duration
	c := &cobra.Command{
		Use:   "partition TARGET... [--for DURATION]",
		Short: "Cut hosts or racks off the testbed network (every packet across the cut dropped, both ways)",
		Long: `A TARGET is a host (dn1 or host:dn1: it reaches no other host) or a rack
(rack:rack-b: its uplink is cut; its hosts still reach each other). Packets are
dropped silently, as behind a dead switch port: no reset, no ICMP, so
connections hang until timeouts notice. The rates of the hosts are kept, and
"smarth testbed heal" restores the links. With --for the command holds the cut
that long, then heals it (also on Ctrl-C). "smarth testbed status" lists the
cuts in force.`,
		Example: `  sudo smarth testbed partition dn3
  sudo smarth testbed partition rack:rack-b --for 60s
  sudo smarth testbed heal --all`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cuts, err := parseCuts(args)
			if err != nil {
				return err
			}
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			for _, c := range cuts {
				if err := m.Partition(cmd.Context(), name, c); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s cut off\n", c)
			}
			if hold <= 0 {
				return nil
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			select {
			case <-time.After(hold):
			case <-ctx.Done():
			}
			var errs []error
			for _, c := range cuts {
				// Not ctx: a Ctrl-C must still heal.
				if err := m.Heal(context.Background(), name, c); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s healed\n", c)
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	c.Flags().DurationVar(&hold, "for", 0, "hold the cut this long, then heal it (0: until smarth testbed heal)")
	return c
}

func newTestbedHealCmd(f *testbedFlags) *cobra.Command {
	var name string
	var all bool
	c := &cobra.Command{
		Use:   "heal TARGET... | --all",
		Short: "End network partitions made by smarth testbed partition",
		Example: `  sudo smarth testbed heal dn3
  sudo smarth testbed heal rack:rack-b
  sudo smarth testbed heal --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usageErr("heal: name the TARGETs (HOST, host:HOST, rack:RACK) or give --all")
			}
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			cuts, err := parseCuts(args)
			if err != nil {
				return err
			}
			if all {
				if cuts, err = m.Cuts(name); err != nil {
					return err
				}
				if len(cuts) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no partition in force")
				}
			}
			for _, c := range cuts {
				if err := m.Heal(cmd.Context(), name, c); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s healed\n", c)
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	c.Flags().BoolVar(&all, "all", false, "heal every partition in force")
	return c
}

func parseCuts(args []string) ([]testbed.Cut, error) {
	var cuts []testbed.Cut
	for _, a := range args {
		c, err := testbed.ParseCut(a)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		cuts = append(cuts, c)
	}
	return cuts, nil
}
