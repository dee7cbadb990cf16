package client

import (
	"sync"
	"time"
)

// periodic runs task every period on one goroutine while anything holds
// it. The lease renewals and the speed reports are needed only while files
// are open for writing, so a client that only reads runs neither; after
// stop (FileSystem.Close) the task never starts again.
type periodic struct {
	period func() time.Duration // read when the goroutine starts: tests shorten the config's period after New
	task   func()

	mu      sync.Mutex
	holders int           // guarded by mu: files open for writing
	stopped bool          // guarded by mu
	quit    chan struct{} // guarded by mu: closes the running goroutine, nil if none
}

// acquire notes one more holder, starting the goroutine if needed.
func (p *periodic) acquire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holders++
	if p.quit == nil && !p.stopped {
		p.quit = make(chan struct{})
		go p.run(p.quit)
	}
}

// release notes one holder gone; the goroutine stops with the last, and
// release then reports true.
func (p *periodic) release() (last bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holders--
	if p.holders <= 0 && p.quit != nil {
		close(p.quit)
		p.quit = nil
	}
	return p.holders <= 0
}

// stop ends the goroutine for good.
func (p *periodic) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.quit != nil {
		close(p.quit)
		p.quit = nil
	}
}

func (p *periodic) run(quit chan struct{}) {
	t := time.NewTicker(p.period())
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			p.task()
		}
	}
}
