package quorum

import (
	"testing"
	"time"
)

func TestLeaderWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := time.Hour // no case below may wait it out
	var w leaderWait
	if w.wait(t0, grace, nil) {
		t.Fatal("a leader before any was known")
	}
	w.changed(2, t0)
	if !w.wait(t0, grace, nil) {
		t.Fatal("no leader while one is known")
	}
	w.changed(0, t0)
	if w.wait(t0.Add(grace), grace, nil) {
		t.Fatal("a leader after the grace since the loss")
	}
	// Within the grace: a waiter returns as soon as a leader is known.
	got := make(chan bool)
	go func() { got <- w.wait(t0.Add(time.Second), grace, nil) }()
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.changed(3, t0.Add(2*time.Second))
	}()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("the waiter saw no leader")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not return when a leader was known")
	}
	// A stopping server ends the wait.
	w.changed(0, t0)
	done := make(chan struct{})
	close(done)
	if w.wait(t0, grace, done) {
		t.Fatal("a leader after the server stopped")
	}
}

// Within the grace with no leader coming, the wait ends with what is left
// of the grace.
func TestLeaderWaitEndsWithTheGrace(t *testing.T) {
	var w leaderWait
	lost := time.Now()
	w.changed(1, lost)
	w.changed(0, lost)
	if w.wait(time.Now(), 50*time.Millisecond, nil) {
		t.Fatal("a leader that never came")
	}
	if d := time.Since(lost); d < 50*time.Millisecond {
		t.Fatalf("the wait ended after %v, before the grace", d)
	}
}
