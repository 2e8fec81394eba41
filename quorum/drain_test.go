package quorum

import (
	"context"
	"testing"
	"time"
)

// TestShutdownAnswersInFlightRequests: a sync in flight when Shutdown
// begins is answered (its read index arrives while the server drains)
// rather than cut off with the connection.
func TestShutdownAnswersInFlightRequests(t *testing.T) {
	release := make(chan struct{})
	reads := make(chan struct{}, 16)
	log := &instantLog{readIndex: func(ctx context.Context) error {
		select {
		case reads <- struct{}{}:
		default:
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	s := serveOn(t, newServerOver(t, 100*time.Millisecond, log))
	c, _ := dialCapture(t, s.Addr().String(), 10*time.Second)
	done := startSync(t, c, reads)
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	checkFor(t, "Shutdown to begin", s.draining)
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the sync in flight at Shutdown failed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sync in flight was not answered")
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestShutdownDrainIsBounded: a request that cannot finish (a sync with no
// leader) holds Shutdown up for at most shutdownDrain, not for its
// context.
func TestShutdownDrainIsBounded(t *testing.T) {
	s, _, reads := startLeaderless(t, 2*time.Second)
	c, _ := dialCapture(t, s.Addr().String(), 40*time.Second)
	done := startSync(t, c, reads)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(began); took > shutdownDrain+5*time.Second {
		t.Fatalf("Shutdown took %v with a stuck sync; the drain bound is %v", took, shutdownDrain)
	}
	if err := <-done; err == nil {
		t.Fatal("the sync succeeded without a leader")
	}
}
