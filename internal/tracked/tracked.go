// Package tracked starts a server's goroutines so that shutdown can wait
// for every one of them (STYLE.md habit 9, after nats-server's
// startGoRoutine): a Group counts its goroutines in a WaitGroup, labels
// each for pprof (label "zkafka" = its name, so a goroutine dump or a CPU
// profile tells the client connections from the timers), and refuses to
// start new ones once Close has been called. Refusing is what makes Wait
// safe: no goroutine can be added while (or after) Shutdown waits, and a
// caller that is refused knows the server is going away and cleans up
// itself (closes the connection it was about to serve).
//
//	g.Go("zk-conn", c.serve)  // false once shutdown began
//	...
//	g.Close()                 // Shutdown: refuse new goroutines
//	err := g.Wait(ctx)        // the started ones end, or ctx does
//
// Both quorum.Server and broker.Broker own one Group.
package tracked

import (
	"context"
	"runtime/pprof"
	"sync"
)

// Group is a set of tracked goroutines. The zero value is ready to use.
type Group struct {
	wg sync.WaitGroup
	mu struct {
		sync.Mutex
		closed bool // Close was called: Go refuses
	}
}

// Go starts fn in a goroutine of the group, labelled name for pprof. It
// returns false, and does not start fn, once Close has been called.
func (g *Group) Go(name string, fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		pprof.Do(context.Background(), pprof.Labels("zkafka", name), func(context.Context) { fn() })
	}()
	return true
}

// Close makes every later Go refuse. It does not stop the goroutines
// already running: the owner ends them (closes their connections, closes
// their done channel) and then waits.
func (g *Group) Close() {
	g.mu.Lock()
	g.mu.closed = true
	g.mu.Unlock()
}

// Closed reports whether Close has been called.
func (g *Group) Closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.closed
}

// Wait waits until every goroutine of the group has returned, or ctx
// ends (it then returns ctx's error; the goroutines keep running). Call it
// after Close, or goroutines started meanwhile may be missed.
func (g *Group) Wait(ctx context.Context) error {
	if ctx.Done() == nil {
		g.wg.Wait()
		return nil
	}
	waited := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
