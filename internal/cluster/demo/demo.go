package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/diskperm"
	"smarth/internal/units"
)

// Options of a demo run.
type Options struct {
	// Home is the cluster home: configs, logs, data. Default
	// <cluster.Home()>/demo, i.e. ./.smarth/demo in the project (or
	// $SMARTH_HOME/demo). It is removed after a successful run without
	// Keep and kept, with every daemon's log, after a failure.
	Home      string
	Binary    string // smarth binary the daemons run; default this one
	Keep      bool   // leave the cluster running at the end
	Size      int64  // sample file size; default 200 MiB
	DataNodes int    // default 3
	Seed      uint64 // sample content seed; default 2024
	// NodeManagers starts the MapReduce daemons and runs the WordCount
	// step (only when this binary has them).
	NodeManagers bool
	// WordCount runs the WordCount step; default ClusterWordCount.
	WordCount WordCountFunc
	Progress  bool      // draw progress bars (when Out is a terminal)
	Out       io.Writer // default os.Stdout
}

// WordCountFunc runs a WordCount job over input on the cluster in st and
// returns the top words with their counts, most frequent first.
type WordCountFunc func(ctx context.Context, st *cluster.State, input, output string, top int) ([]WordCountEntry, error)

// WordCountEntry is one word of the WordCount step's result.
type WordCountEntry struct {
	Word  string
	Count int64
}

// Run runs the demo. The cluster is taken down at the end unless Keep,
// also when a step fails.
func Run(ctx context.Context, opts Options) (err error) {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Size <= 0 {
		opts.Size = 200 << 20
	}
	if opts.DataNodes <= 0 {
		opts.DataNodes = 3
	}
	if opts.Seed == 0 {
		opts.Seed = 2024
	}
	if opts.WordCount == nil {
		opts.WordCount = ClusterWordCount
	}
	if opts.Home == "" {
		opts.Home = filepath.Join(cluster.Home(), "demo")
	}
	if opts.Home, err = filepath.Abs(opts.Home); err != nil {
		return err
	}
	d := &demo{opts: opts, out: opts.Out, start: time.Now()}
	defer func() {
		if err != nil {
			fmt.Fprintf(d.out, "\nThe demo failed. Every daemon's log is in %s\n", filepath.Join(opts.Home, "logs"))
		}
	}()

	d.step("Start a local cluster: 1 namenode + %d datanodes on 127.0.0.1, each its own process", opts.DataNodes)
	st, err := cluster.Up(ctx, cluster.Options{
		Home: opts.Home, Binary: opts.Binary, DataNodes: opts.DataNodes, NodeManagers: opts.NodeManagers,
		Detach: opts.Keep, Out: indent{opts.Out},
	})
	if err != nil {
		return err
	}
	defer func() {
		if opts.Keep {
			fmt.Fprintf(d.out, "\nThe cluster keeps running (home %s). Try:\n", opts.Home)
			fmt.Fprintf(d.out, "  SMARTH_HOME=%s smarth fs ls /demo\n  SMARTH_HOME=%s smarth cluster status\n  SMARTH_HOME=%s smarth cluster down\n", opts.Home, opts.Home, opts.Home)
			return
		}
		d.step("Take the cluster down")
		lines, derr := cluster.Down(opts.Home, 10*time.Second)
		for _, l := range lines {
			fmt.Fprintln(d.out, "  "+l)
		}
		err = errors.Join(err, derr)
		if err == nil {
			err = cluster.Purge(opts.Home)
		}
		if err == nil {
			fmt.Fprintf(d.out, "\nDemo finished in %v. Every step passed.\n", time.Since(d.start).Round(100*time.Millisecond))
		}
	}()

	// The cluster is secure: the owner's token file is in its home.
	sec, err := st.Security()
	if err != nil {
		return err
	}
	fs, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		return err
	}
	defer fs.Close()
	if err := d.fileSteps(ctx, fs); err != nil {
		return err
	}
	return d.wordCountStep(ctx, fs, st)
}

type demo struct {
	opts  Options
	out   io.Writer
	n     int
	start time.Time
}

func (d *demo) step(format string, a ...any) {
	d.n++
	fmt.Fprintf(d.out, "\n[%d] %s\n", d.n, fmt.Sprintf(format, a...))
}

// indent prefixes each line written through it with two spaces.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	s := strings.TrimSuffix(string(p), "\n")
	_, err := io.WriteString(i.w, "  "+strings.ReplaceAll(s, "\n", "\n  ")+"\n")
	return len(p), err
}

func (d *demo) fileSteps(ctx context.Context, fs *client.FileSystem) error {
	local := filepath.Join(d.opts.Home, "data", "sample.dat")
	d.step("Generate a sample file: %s of seeded random bytes at %s", units.FormatSize(d.opts.Size), local)
	sum, err := generate(local, d.opts.Size, d.opts.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "  sha256 %s\n", sum)

	const remote = "/demo/sample.dat"
	d.step("Upload it: smarth fs put %s %s  (replication %d, 64 MiB blocks)", local, remote, d.replication())
	t0 := time.Now()
	if err := d.put(ctx, fs, local, remote); err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(d.out, "  uploaded in %v (%.0f MiB/s)\n", el.Round(time.Millisecond), float64(d.opts.Size)/(1<<20)/el.Seconds())

	d.step("List it: smarth fs ls /demo")
	infos, err := fs.List(ctx, "/demo")
	if err != nil {
		return err
	}
	for _, fi := range infos {
		fmt.Fprintf(d.out, "  %s %3d %s %s %12d %s %s\n", fi.Mode.String(), fi.Replication, fi.Owner, fi.Group, fi.Size, fi.ModTime.Format("2006-01-02 15:04"), fi.Path)
	}
	locs, err := fs.BlockLocations(ctx, remote, 0, d.opts.Size)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "  %d blocks; where their replicas are (rack-aware placement):\n", len(locs))
	for i, l := range locs {
		if i == 4 && len(locs) > 5 {
			fmt.Fprintf(d.out, "    ... %d more\n", len(locs)-4)
			break
		}
		var where []string
		for j, h := range l.Hosts {
			where = append(where, h+" "+l.Racks[j])
		}
		fmt.Fprintf(d.out, "    block %d  offset %-10d %s\n", i, l.Offset, strings.Join(where, ", "))
	}

	d.step("Read it back: smarth fs get %s, and verify its SHA-256", remote)
	t0 = time.Now()
	got, err := d.readSum(ctx, fs, remote)
	if err != nil {
		return err
	}
	el = time.Since(t0)
	fmt.Fprintf(d.out, "  read in %v (%.0f MiB/s), sha256 %s\n", el.Round(time.Millisecond), float64(d.opts.Size)/(1<<20)/el.Seconds(), got)
	if got != sum {
		return fmt.Errorf("verify %s: sha256 %s differs from the uploaded file's %s", remote, got, sum)
	}
	fmt.Fprintln(d.out, "  verified: the bytes read back are the bytes uploaded")
	return nil
}

func (d *demo) replication() int { return min(3, d.opts.DataNodes) }

// generate writes size seeded random bytes to path and returns their SHA-256.
func generate(path string, size int64, seed uint64) (string, error) {
	// It lies in the cluster home's data/: private like the rest of it.
	if err := os.MkdirAll(filepath.Dir(path), diskperm.Dir); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, diskperm.File)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := min(int64(len(buf)), left)
		b := buf[:n]
		for i := 0; i < len(b); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8 && i+j < len(b); j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		h.Write(b)
		if _, err := f.Write(b); err != nil {
			return "", err
		}
		left -= n
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d *demo) bar(size int64, desc string) io.Writer {
	if !d.opts.Progress {
		return io.Discard
	}
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(d.out),
		progressbar.OptionSetDescription("  "+desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionClearOnFinish(),
	)
}

func (d *demo) put(ctx context.Context, fs *client.FileSystem, local, remote string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := fs.Create(ctx, remote, client.CreateOptions{Overwrite: true, Replication: d.replication()})
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.MultiWriter(w, d.bar(d.opts.Size, "put")), f); err != nil {
		_ = w.Abort()
		return err
	}
	return w.Close()
}

func (d *demo) readSum(ctx context.Context, fs *client.FileSystem, remote string) (string, error) {
	r, err := fs.Open(ctx, remote)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(h, d.bar(r.Size(), "get")), r, make([]byte, 1<<20)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
