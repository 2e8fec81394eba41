package raftnode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/faultfs"
)

// TestStorageFailureStopsNode: an fsync of the raft log that fails stops
// the node. Propose fails, Done is closed, and Err and Stop both return the
// storage error (a server watches Done and Err to stop serving).
func TestStorageFailureStopsNode(t *testing.T) {
	fs := faultfs.New()
	cfg := testConfig(1, t.TempDir())
	cfg.LogFS = fs
	n := mustStart(t, cfg, &testSM{})
	if _, _, err := n.Propose(context.Background(), []byte("before")); err != nil {
		t.Fatalf("Propose before the fault: %v", err)
	}
	if err := n.Err(); err != nil {
		t.Fatalf("Err of a running node: %v", err)
	}
	fs.FailSyncsAfter(0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := n.Propose(ctx, []byte("after")); err == nil || ctx.Err() != nil {
		t.Fatalf("Propose after a failed fsync: %v (ctx %v)", err, ctx.Err())
	}
	select {
	case <-n.Done():
	case <-ctx.Done():
		t.Fatal("the node did not stop after a failed fsync")
	}
	if err := n.Err(); !errors.Is(err, faultfs.ErrInjected) {
		t.Fatalf("Err after a failed fsync: %v", err)
	}
	if err := n.Stop(); !errors.Is(err, faultfs.ErrInjected) {
		t.Fatalf("Stop after a failed fsync: %v", err)
	}
}

// TestErrAfterCleanStop: Err is nil after a plain Stop.
func TestErrAfterCleanStop(t *testing.T) {
	n := mustStart(t, testConfig(1, t.TempDir()), &testSM{})
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := n.Err(); err != nil {
		t.Fatalf("Err after Stop: %v", err)
	}
}
