package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/client/fsshell"
)

// hdfsWords lets a command take hdfs dfs's single-dash word options
// (-skipTrash, -name), which pflag would read as a cluster of one-letter
// flags: the command disables cobra's parsing, and this rewrites those
// words to "--word" and parses the flags itself (persistent ones
// included). It returns the positional args, or help=true when the
// command printed its help.
func hdfsWords(cmd *cobra.Command, args []string, words ...string) (rest []string, help bool, err error) {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 {
			for _, w := range words {
				if a[1:] == w {
					a = "--" + w
				}
			}
		}
		out = append(out, a)
	}
	cmd.DisableFlagParsing = false
	err = cmd.ParseFlags(out)
	cmd.DisableFlagParsing = true
	if err != nil {
		return nil, false, cmd.FlagErrorFunc()(cmd, err)
	}
	if h, _ := cmd.Flags().GetBool("help"); h {
		return nil, true, cmd.Help()
	}
	return cmd.Flags().Args(), false, nil
}

func fsCatCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "cat PATH...", Short: "Print files", Example: "  smarth fs cat /out/part-00000 | head\n  smarth fs cat '/out/part-*'", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Cat(ctx, args) }),
	}
}

func fsTextCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "text PATH...", Short: "Print files as text: gzip is decompressed, anything else printed as is (SequenceFile/Avro not decoded)",
		Example: "  smarth fs text /logs/day.log.gz", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Text(ctx, args) }),
	}
}

func fsHeadCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "head PATH...", Short: "Print the first KiB of a file", Example: "  smarth fs head /out/part-00000", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Head(ctx, args) }),
	}
}

func fsTailCmd(f *fsFlags) *cobra.Command {
	var follow bool
	var every time.Duration
	c := &cobra.Command{
		Use: "tail [-f] [-s INTERVAL] PATH", Short: "Print the last KiB of a file; -f keeps printing what is appended",
		Example: "  smarth fs tail /logs/app.log\n  smarth fs tail -f -s 1s /logs/app.log", Args: exactArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Tail(ctx, args[0], follow, every)
		}),
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "poll for appended data until interrupted")
	c.Flags().DurationVarP(&every, "sleep", "s", 5*time.Second, "with -f, how often to poll (HDFS: 5s)")
	return c
}

func fsLsCmd(f *fsFlags) *cobra.Command {
	var o fsshell.LsOptions
	c := &cobra.Command{
		Use:     "ls [-R] [-h] [-d] [-t|-S] [-r] [-u] [-C] [PATH...]",
		Short:   "List: permissions, replication, owner, group, size, date, path (no PATH: the home directory)",
		Example: "  smarth fs ls /\n  smarth fs ls -R -h /data\n  smarth fs ls -t -r '/logs/*'\n  smarth fs ls -d /data",
		RunE:    f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Ls(ctx, args, o) }),
	}
	c.Flags().BoolVarP(&o.Recursive, "recursive", "R", false, "list subdirectories too")
	c.Flags().BoolVarP(&o.Dirs, "directory", "d", false, "list directories as plain entries, not their contents")
	c.Flags().BoolVarP(&o.ByTime, "time", "t", false, "newest first")
	c.Flags().BoolVarP(&o.BySize, "size", "S", false, "largest first")
	c.Flags().BoolVarP(&o.Reverse, "reverse", "r", false, "reverse the order")
	c.Flags().BoolVarP(&o.AccessTime, "access-time", "u", false, "show (and with -t sort by) access time")
	c.Flags().BoolVarP(&o.PathOnly, "paths", "C", false, "paths only")
	humanFlag(c, &o.Human)
	return c
}

func fsMkdirCmd(f *fsFlags) *cobra.Command {
	var parents bool
	c := &cobra.Command{
		Use: "mkdir [-p] PATH...", Short: "Make directories", Example: "  smarth fs mkdir -p /data/in\n  smarth fs mkdir results", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Mkdir(ctx, args, parents) }),
	}
	c.Flags().BoolVarP(&parents, "parents", "p", false, "make parents as needed; no error if it exists")
	return c
}

func fsRmCmd(f *fsFlags) *cobra.Command {
	var o fsshell.RmOptions
	c := &cobra.Command{
		Use:   "rm [-r|-R] [-f] [-skipTrash] PATH...",
		Short: "Delete files, or directories with -r",
		Long: `Delete files, or directories and what they hold with -r. When the trash is on
(the namenode's trash_interval, on in a local cluster; HDFS's fs.trash.interval)
each path moves to /user/USER/.Trash/Current/PATH instead (on stderr, as HDFS's
log line: "Moved: 'hdfs://NN/PATH' to trash at: hdfs://NN/user/USER/.Trash/..."),
to be deleted by expunge once older than the interval.
-skipTrash deletes at once ("Deleted PATH"), as does rm inside the trash.`,
		Example:            "  smarth fs rm /tmp/x\n  smarth fs rm -r -f -skipTrash /out\n  smarth fs rm '/tmp/job-*'",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "skipTrash", "safely")
			if help || err != nil {
				return err
			}
			if len(args) == 0 {
				return usageErr("rm: needs at least 1 argument(s); usage: %s", cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Rm(ctx, args, o) })(cmd, args)
		},
	}
	c.Flags().BoolVarP(&o.Recursive, "recursive", "r", false, "delete directories and their contents")
	c.Flags().BoolVarP(&o.Recursive, "R", "R", false, "same as -r")
	c.Flags().BoolVarP(&o.Force, "force", "f", false, "no error for missing paths")
	c.Flags().BoolVar(&o.SkipTrash, "skipTrash", false, "delete at once instead of moving to the trash")
	c.Flags().Bool("safely", false, "accepted for HDFS scripts; no confirmation is asked")
	c.Flags().Bool("help", false, "help for rm")
	return c
}

func fsRmdirCmd(f *fsFlags) *cobra.Command {
	var ignore bool
	c := &cobra.Command{
		Use: "rmdir [--ignore-fail-on-non-empty] DIR...", Short: "Delete empty directories",
		Example: "  smarth fs rmdir /tmp/empty\n  smarth fs rmdir --ignore-fail-on-non-empty '/tmp/run-*'", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Rmdir(ctx, args, ignore) }),
	}
	c.Flags().BoolVar(&ignore, "ignore-fail-on-non-empty", false, "leave non-empty directories without an error")
	return c
}

func fsMvCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "mv SRC... DST", Short: "Move or rename (several sources: into the directory DST)",
		Example: "  smarth fs mv /tmp/out /results/run1\n  smarth fs mv '/in/*.csv' /archive/", Args: nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Mv(ctx, args[:len(args)-1], args[len(args)-1])
		}),
	}
}

func fsTouchzCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "touchz PATH...", Short: "Create empty files (an existing non-empty file is an error)",
		Example: "  smarth fs touchz /out/_SUCCESS", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Touchz(ctx, args) }),
	}
}

func fsChecksumCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "checksum PATH...",
		Short: "Print files' checksums as HDFS computes them (MD5-of-MD5s of CRC32C chunks)",
		Long: `Print each file's checksum as hdfs dfs -checksum: PATH, the algorithm
(MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC>CRC32C) and the value in hex. It is
computed from the checksums the datanodes stored, without reading the data. The
same bytes written with the same block size and bytes per checksum give the
same value here and on HDFS, so copies between the two can be compared.`,
		Example: "  smarth fs checksum /data/day.csv\n  smarth fs checksum '/out/part-*'", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Checksum(ctx, args) }),
	}
}

func fsGetfattrCmd(f *fsFlags) *cobra.Command {
	var o fsshell.GetfattrOptions
	c := &cobra.Command{
		Use:   "getfattr [-R] {-n NAME | -d} [-e ENCODING] PATH...",
		Short: "Print extended attributes (names with their namespace: user., trusted.)",
		Long: `Print the extended attributes of files and directories as hdfs dfs -getfattr:
"# file: PATH", then NAME=VALUE per attribute. -n prints one attribute, -d all
the ones you may see (trusted.* only for superusers); -e encodes values as text
(quoted, the default), hex (0x...) or base64 (0s...); -R recurses.`,
		Example: "  smarth fs getfattr -d /data/day.csv\n  smarth fs getfattr -n user.source -e hex /data/day.csv", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Getfattr(ctx, args, o) }),
	}
	c.Flags().StringVarP(&o.Name, "name", "n", "", "the attribute to print")
	c.Flags().BoolVarP(&o.Dump, "dump", "d", false, "print every attribute")
	c.Flags().StringVarP(&o.Encoding, "encoding", "e", "text", "value encoding: text, hex or base64")
	c.Flags().BoolVarP(&o.Recursive, "recursive", "R", false, "list the attributes of everything below directories too")
	return c
}

func fsSetfattrCmd(f *fsFlags) *cobra.Command {
	var o fsshell.SetfattrOptions
	c := &cobra.Command{
		Use:   "setfattr {-n NAME [-v VALUE] | -x NAME} PATH...",
		Short: "Set or remove an extended attribute",
		Long: `Set (create or replace) an extended attribute with -n and -v, or remove one with
-x, as hdfs dfs -setfattr. NAME carries its namespace: user.* (the permission
bits decide) or trusted.* (superusers only). VALUE is text, "quoted text", 0x
followed by hex or 0s followed by base64; without -v the value is empty.`,
		Example: "  smarth fs setfattr -n user.source -v crawler /data/day.csv\n  smarth fs setfattr -x user.source /data/day.csv", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Setfattr(ctx, args, o) }),
	}
	c.Flags().StringVarP(&o.Name, "name", "n", "", "the attribute to set")
	c.Flags().StringVarP(&o.Value, "value", "v", "", "its value")
	c.Flags().StringVarP(&o.Remove, "remove", "x", "", "the attribute to remove")
	return c
}

func fsExpungeCmd(f *fsFlags) *cobra.Command {
	var immediate bool
	c := &cobra.Command{
		Use:   "expunge [-immediate]",
		Short: "Delete trash checkpoints older than the trash interval, then checkpoint the trash",
		Long: `Empty the trash as hdfs dfs -expunge: delete the checkpoints of
/user/USER/.Trash older than the trash interval, then rename .Trash/Current to
a new checkpoint named after the time (yyMMddHHmmss). -immediate checkpoints
Current and deletes every checkpoint at once.`,
		Example:            "  smarth fs expunge\n  smarth fs expunge -immediate",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "immediate")
			if help || err != nil {
				return err
			}
			if len(args) != 0 {
				return usageErr("expunge: takes no paths; usage: %s", cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, _ []string) error { return sh.Expunge(ctx, immediate) })(cmd, args)
		},
	}
	c.Flags().BoolVar(&immediate, "immediate", false, "delete every checkpoint, whatever its age")
	c.Flags().Bool("help", false, "help for expunge")
	return c
}

func fsTouchCmd(f *fsFlags) *cobra.Command {
	var o fsshell.TouchOptions
	c := &cobra.Command{
		Use:   "touch [-a] [-m] [-t TIMESTAMP] [-c] PATH...",
		Short: "Set access and modification times to now (or -t), creating missing files unless -c",
		Long: `Set the access and modification times of files to now, or to -t's
TIMESTAMP (yyyyMMdd:HHmmss, local time), as hdfs dfs -touch. A missing file is
created empty (its times are its creation time unless -t is given); -c
creates nothing. -a changes only the access time, -m only the modification
time. A directory is an error.`,
		Example: "  smarth fs touch /out/_SUCCESS\n  smarth fs touch -m -t 20240131:235959 /data/day.csv", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Touch(ctx, args, o) }),
	}
	c.Flags().BoolVarP(&o.AccessOnly, "access", "a", false, "change only the access time")
	c.Flags().BoolVarP(&o.ModOnly, "modification", "m", false, "change only the modification time")
	c.Flags().StringVarP(&o.Timestamp, "timestamp", "t", "", "use this time (yyyyMMdd:HHmmss) instead of now")
	c.Flags().BoolVarP(&o.NoCreate, "no-create", "c", false, "do not create missing files")
	return c
}

func fsTestCmd(f *fsFlags) *cobra.Command {
	var e, d, file, s, z bool
	c := &cobra.Command{
		Use:   "test -e|-d|-f|-s|-z PATH",
		Short: "Exit 0 if PATH exists (-e), is a directory (-d), a file (-f), is not empty (-s), is empty (-z); else 1",
		Example: `  smarth fs test -d /data && echo "a directory"
  if smarth fs test -e /out/_SUCCESS; then echo done; fi`,
		Args: exactArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			var flag string
			for _, t := range []struct {
				on   bool
				name string
			}{{e, "e"}, {d, "d"}, {file, "f"}, {s, "s"}, {z, "z"}} {
				if t.on {
					if flag != "" {
						return usageErr("test: give one of -e, -d, -f, -s, -z")
					}
					flag = t.name
				}
			}
			if flag == "" {
				return usageErr("test: give one of -e, -d, -f, -s, -z")
			}
			ok, err := sh.Test(ctx, flag, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return &exitError{code: 1, err: errTestFalse, quiet: true}
			}
			return nil
		}),
	}
	c.Flags().BoolVarP(&e, "exists", "e", false, "the path exists")
	c.Flags().BoolVarP(&d, "dir", "d", false, "the path is a directory")
	c.Flags().BoolVarP(&file, "file", "f", false, "the path is a file")
	c.Flags().BoolVarP(&s, "nonempty", "s", false, "the path is not empty (size > 0)")
	c.Flags().BoolVarP(&z, "zero", "z", false, "the path is zero length")
	return c
}

func fsStatCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stat [FORMAT] PATH...",
		Short: "Print file status by FORMAT (default %y)",
		Long: `Print file status by FORMAT, as hdfs dfs -stat: %a permissions in octal,
%A symbolic (rwxr-xr-x), %b size, %F type, %g group, %n name, %o block size,
%r replication, %u owner, %x %X access time (UTC text, ms), %y %Y modification
time (UTC text "2006-01-02 15:04:05", ms). Default %y.`,
		Example: `  smarth fs stat /data/big.dat
  smarth fs stat "%n %b bytes, %r replicas, %o-byte blocks, %a %u:%g" /data/big.dat`,
		Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			format := ""
			if len(args) > 1 && strings.Contains(args[0], "%") {
				format, args = args[0], args[1:]
			}
			return sh.Stat(ctx, format, args)
		}),
	}
}

func fsDuCmd(f *fsFlags) *cobra.Command {
	var summary, human, header bool
	c := &cobra.Command{
		Use: "du [-s] [-h] [-v] PATH...", Short: "Show sizes and space consumed (size x replication)",
		Example: "  smarth fs du -s -h /data\n  smarth fs du '/data/*'", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Du(ctx, args, summary, human, header)
		}),
	}
	c.Flags().BoolVarP(&summary, "summary", "s", false, "one total per path")
	c.Flags().BoolVarP(&header, "header", "v", false, "a header line")
	humanFlag(c, &human)
	return c
}

func fsCountCmd(f *fsFlags) *cobra.Command {
	var o fsshell.CountOptions
	var types bool
	c := &cobra.Command{
		Use:   "count [-q] [-h] [-v] [-t [TYPE,...]] PATH...",
		Short: "Count directories, files and bytes under each path (HDFS's columns)",
		Long: `Count directories, files and bytes under each path, in hdfs dfs -count's
columns: DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME. With -q the quota columns
come first: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA ("none" and "inf" where
none is set; see smarth admin setQuota/setSpaceQuota). With -q -t only the
storage-type quotas: TYPE_QUOTA REM_TYPE_QUOTA for each of SSD, DISK, ARCHIVE,
PROVIDED and NVDIMM, or of the comma-separated TYPEs given after -t (see
smarth admin setSpaceQuota -storageType). As hdfs dfs -count, -t is ignored
without -q.`,
		Example: "  smarth fs count -q -h -v /data\n  smarth fs count -q -t -v /data\n  smarth fs count -q -t DISK,SSD /data", Args: nArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Types = nil
			if types {
				// -t takes an optional list, as Hadoop's CommandFormat: the
				// word after it when a path still follows.
				list := ""
				if len(args) > 1 && !strings.HasPrefix(args[0], "/") && !strings.Contains(args[0], "://") {
					list, args = args[0], args[1:]
				}
				var err error
				if o.Types, err = fsshell.ParseStorageTypes(list); err != nil {
					return usageErr("count: -t: %v", err)
				}
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Count(ctx, args, o) })(cmd, args)
		},
	}
	c.Flags().BoolVarP(&types, "type", "t", false, "with -q, the storage-type quota columns only; an optional TYPE,... list may follow")
	c.Flags().BoolVarP(&o.Quotas, "quotas", "q", false, "quota columns first")
	c.Flags().BoolVarP(&o.Header, "header", "v", false, "a header line")
	humanFlag(c, &o.Human)
	return c
}

func fsDfCmd(f *fsFlags) *cobra.Command {
	var human bool
	c := &cobra.Command{
		Use: "df [-h] [PATH]", Short: "Show capacity, used and available space of the file system (live datanodes)",
		Example: "  smarth fs df -h", Args: cobra.MaximumNArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Df(ctx, human) }),
	}
	humanFlag(c, &human)
	return c
}

func fsFindCmd(f *fsFlags) *cobra.Command {
	var o fsshell.FindOptions
	var typ string
	var print0 bool
	c := &cobra.Command{
		Use:   "find PATH... [-name PATTERN | -iname PATTERN] [-type f|d] [-print | -print0]",
		Short: "Print paths at or under PATH that match every test",
		Example: `  smarth fs find /data -name '*.csv'
  smarth fs find / -iname 'part-*' -type f -print0 | xargs -0 echo`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "name", "iname", "type", "print", "print0")
			if help || err != nil {
				return err
			}
			switch typ {
			case "":
			case "f", "d":
				o.Type = typ[0]
			default:
				return usageErr("find: -type %q: want f or d", typ)
			}
			o.Print0 = print0
			return f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Find(ctx, args, o) })(cmd, args)
		},
	}
	c.Flags().StringVar(&o.Name, "name", "", "the last path component matches this glob")
	c.Flags().StringVar(&o.IName, "iname", "", "like -name, ignoring case")
	c.Flags().StringVar(&typ, "type", "", "f (file) or d (directory)")
	c.Flags().Bool("print", true, "print each match and a newline (the default)")
	c.Flags().BoolVar(&print0, "print0", false, "print each match and a NUL")
	c.Flags().Bool("help", false, "help for find")
	return c
}

func fsSetrepCmd(f *fsFlags) *cobra.Command {
	var wait bool
	var timeout time.Duration
	c := &cobra.Command{
		Use: "setrep [-R] [-w] N PATH...", Short: "Set the replication of files (every file under a directory)",
		Example: "  smarth fs setrep -w 2 /data/big.dat\n  smarth fs setrep 1 '/tmp/*'", Args: nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return usageErr("setrep: replication %q must be a positive number", args[0])
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Setrep(ctx, n, paths, wait, timeout)
			})(cmd, args[1:])
		},
	}
	c.Flags().BoolVarP(&wait, "wait", "w", false, "wait until every block has N replicas")
	c.Flags().BoolP("recursive", "R", false, "accepted for HDFS scripts: directories are always done recursively")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with -w, give up after this long")
	return c
}

func fsFsckCmd(f *fsFlags) *cobra.Command {
	var o fsshell.FsckOptions
	var verbose bool
	c := &cobra.Command{
		Use:   "fsck [PATH] [-list-corruptfileblocks | [-move | -delete] [-openforwrite] [-files [-blocks [-locations | -racks]]]]",
		Short: "Check block health: blocks, replicas, under-replicated/missing/corrupt summary",
		Long: `Check the health of the files under PATH (default /) with hdfs fsck's options
and words: problems are always reported; -files adds a line per file and
directory, -blocks each block (blk_ID_GS len=N Live_repl=R), -locations its
replicas (ip:port), -racks them as /rack/ip:port. -list-corruptfileblocks only
lists the blocks without a live replica and their files; -move copies what can
still be read of each such file to /lost+found/PATH/0, 1, ... (one file per run
of readable blocks); -delete deletes the files holding such blocks; files still being written are left out unless
-openforwrite. -v is -files -blocks -locations. It starts "FSCK started by
USER (auth:SIMPLE|TOKEN) from /IP for path PATH at DATE", as HDFS's; the last line is
"The filesystem under path 'PATH' is HEALTHY" or CORRUPT (exit status 1).`,
		Example:            "  smarth fs fsck /\n  smarth fs fsck /data -files -blocks -locations\n  smarth fs fsck / -list-corruptfileblocks",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "files", "blocks", "locations", "racks", "list-corruptfileblocks", "move", "delete", "openforwrite")
			if help || err != nil {
				return err
			}
			if len(args) > 1 {
				return usageErr("fsck: takes one path; usage: %s", cmd.UseLine())
			}
			if verbose {
				o.Files, o.Blocks, o.Locations = true, true, true
			}
			if o.ListCorrupt && (o.Files || o.Delete || o.Move) {
				return usageErr("fsck: -list-corruptfileblocks goes alone; usage: %s", cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
				p := "/"
				if len(args) == 1 {
					var err error
					if p, err = sh.Resolve(args[0]); err != nil {
						return err
					}
				}
				return sh.Fsck(ctx, p, o)
			})(cmd, args)
		},
	}
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "-files -blocks -locations")
	c.Flags().BoolVar(&o.Files, "files", false, "a line per file and directory")
	c.Flags().BoolVar(&o.Blocks, "blocks", false, "with -files, each block")
	c.Flags().BoolVar(&o.Locations, "locations", false, "with -blocks, the replicas' ip:port")
	c.Flags().BoolVar(&o.Racks, "racks", false, "with -blocks, the replicas as /rack/ip:port")
	c.Flags().BoolVar(&o.ListCorrupt, "list-corruptfileblocks", false, "list only the blocks without a live replica, with their files")
	c.Flags().BoolVar(&o.Delete, "delete", false, "delete the files that hold blocks without a live replica")
	c.Flags().BoolVar(&o.Move, "move", false, "copy the readable blocks of corrupt files to /lost+found/PATH")
	c.Flags().BoolVar(&o.OpenForWrite, "openforwrite", false, "check files still being written too (left out without it), marked OPENFORWRITE")
	c.Flags().Bool("help", false, "help for fsck")
	return c
}
