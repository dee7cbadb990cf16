package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"smarth/internal/rpc/dfspb"
)

// Pool is the cache pool the runner and `smarth job affinity` put their
// directives in.
const Pool = "smarth-bench"

// cacheAdmin is the namenode's cacheadmin surface the experiments use,
// over the ClientProtocol RPCs of seed 003 (client.FileSystem.Namenode()).
type cacheAdmin struct{ nn dfspb.ClientProtocolClient }

// Policy is the namenode's cache policy name.
func (c cacheAdmin) Policy(ctx context.Context) (string, error) {
	st, err := c.nn.GetCacheStats(ctx, &dfspb.GetCacheStatsRequest{})
	if err != nil {
		return "", fmt.Errorf("cache stats: %w", err)
	}
	return st.GetPolicy(), nil
}

// Pin adds a directive for path (creating the pool if needed) and returns
// its id.
func (c cacheAdmin) Pin(ctx context.Context, path string) (int64, error) {
	// The pool may exist from an earlier run; its absence shows in the
	// directive error below, which is the one worth reporting.
	c.nn.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: Pool}})
	r, err := c.nn.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: path, Pool: Pool, Replication: 1}})
	if err != nil {
		return 0, fmt.Errorf("cache directive for %s: %w", path, err)
	}
	return r.GetId(), nil
}

// Unpin removes the directives on path (all of them if path is "").
func (c cacheAdmin) Unpin(ctx context.Context, path string) error {
	l, err := c.nn.ListCacheDirectives(ctx, &dfspb.ListCacheDirectivesRequest{Path: path})
	if err != nil {
		return fmt.Errorf("list cache directives: %w", err)
	}
	var errs []error
	for _, d := range l.GetDirectives() {
		if _, err := c.nn.RemoveCacheDirective(ctx, &dfspb.RemoveCacheDirectiveRequest{Id: d.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("remove cache directive %d (%s): %w", d.GetId(), d.GetPath(), err))
		}
	}
	return errors.Join(errs...)
}

// emptyDirectivePolls is how many polls (a second apart) a directive may
// cover no bytes before WaitCached says why it never will.
const emptyDirectivePolls = 10

// WaitCached waits until the directives on path report every byte
// cached (bytes_cached == bytes_needed), polling once a second.
func (c cacheAdmin) WaitCached(ctx context.Context, path string, timeout time.Duration) error {
	var need, have int64
	empty := 0 // polls in a row that found the directives covering no bytes
	done := func() (bool, error) {
		l, err := c.nn.ListCacheDirectives(ctx, &dfspb.ListCacheDirectivesRequest{Path: path})
		if err != nil {
			return false, fmt.Errorf("list cache directives: %w", err)
		}
		if len(l.GetDirectives()) == 0 {
			return false, fmt.Errorf("no cache directive on %s", path)
		}
		need, have = 0, 0
		for _, d := range l.GetDirectives() {
			need, have = need+d.GetBytesNeeded(), have+d.GetBytesCached()
		}
		// The namenode resolves a new directive at its next monitor tick,
		// so "needs 0 bytes" is only final once it has lasted a while.
		if empty++; need > 0 {
			empty = 0
		} else if empty >= emptyDirectivePolls {
			return false, fmt.Errorf("the cache directive on %s covers no file: a directive caches a file or the files directly in a directory, not those in its subdirectories; name the directories that hold the files", path)
		}
		return need > 0 && have >= need, nil
	}
	err := poll(ctx, timeout, done)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s not fully cached after %v: %d of %d bytes (is the total cache large enough? see `smarth cache listDirectives --stats`)", path, timeout, have, need)
	}
	return err
}

// WaitEmpty waits until no datanode holds a cached block, after
// directives were removed.
func (c cacheAdmin) WaitEmpty(ctx context.Context, timeout time.Duration) error {
	var used int64
	err := poll(ctx, timeout, func() (bool, error) {
		st, err := c.nn.GetCacheStats(ctx, &dfspb.GetCacheStatsRequest{})
		if err != nil {
			return false, fmt.Errorf("cache stats: %w", err)
		}
		used = 0
		for _, n := range st.GetNodes() {
			used += n.GetUsed()
		}
		return used == 0, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("datanodes still cache %d bytes %v after the directives were removed", used, timeout)
	}
	return err
}

// Stats is the namenode's cache statistics.
func (c cacheAdmin) Stats(ctx context.Context) (*dfspb.GetCacheStatsResponse, error) {
	return c.nn.GetCacheStats(ctx, &dfspb.GetCacheStatsRequest{})
}

// poll calls done once a second until it says yes, fails, or timeout
// passes (context.DeadlineExceeded).
func poll(ctx context.Context, timeout time.Duration, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
