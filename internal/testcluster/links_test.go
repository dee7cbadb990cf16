package testcluster

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"smarth/internal/client"
)

// A slowed link makes writes through it take about as long as its rate
// says; a cut link to every datanode makes writes fail with a clear error;
// healed, they work again.
func TestLinksSlowAndCut(t *testing.T) {
	links := NewLinks()
	c := Start(t, Options{DataNodes: 2, Replication: 2, Links: links})
	fsys := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	data := make([]byte, 1<<20)
	put := func(path string) (time.Duration, error) {
		start := time.Now()
		w, err := fsys.Create(ctx, path, client.CreateOptions{Overwrite: true})
		if err != nil {
			return 0, err
		}
		if _, err := w.Write(data); err != nil {
			w.Abort()
			return 0, err
		}
		err = w.Close()
		return time.Since(start), err
	}
	if _, err := put("/links/warm"); err != nil {
		t.Fatal(err)
	}
	// 1 MiB at 2 MiB/s on every link out of the client: at least 0.5 s.
	links.Slow("client", "*", 2<<20)
	d, err := put("/links/slow")
	if err != nil {
		t.Fatal(err)
	}
	if d < 400*time.Millisecond {
		t.Errorf("1 MiB over a 2 MiB/s link took %v", d)
	}
	links.Heal("client", "*")

	links.Cut("client", "*")
	if _, err := put("/links/cut"); err == nil {
		t.Error("write with every client link cut succeeded")
	}
	links.Heal("client", "*")
	if _, err := put("/links/healed"); err != nil {
		t.Errorf("write after heal: %v", err)
	}
	if _, err := fsys.Stat(ctx, "/links/healed"); errors.Is(err, fs.ErrNotExist) {
		t.Error("healed write left no file")
	}
}

func TestLinksRulePrecedence(t *testing.T) {
	l := NewLinks()
	l.Slow("*", "*", 1)
	l.Slow("client", "*", 2)
	l.Slow("client", "dn2", 3)
	for _, c := range []struct {
		from, to string
		want     int64
	}{{"client", "dn2", 3}, {"client", "dn1", 2}, {"dn1", "dn2", 1}} {
		if got := l.ruleLocked(c.from, c.to).rate; got != c.want {
			t.Errorf("%s -> %s: rate %d, want %d", c.from, c.to, got, c.want)
		}
	}
}
