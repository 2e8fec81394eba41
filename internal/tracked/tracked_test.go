package tracked

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

func TestGoRunsAndWaitWaits(t *testing.T) {
	var g Group
	release := make(chan struct{})
	ended := make(chan struct{})
	if !g.Go("worker", func() { <-release; close(ended) }) {
		t.Fatal("Go refused before Close")
	}
	g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Wait(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Wait with a goroutine still running = %v, want the context's error", err)
	}
	close(release)
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("Wait = %v", err)
	}
	select {
	case <-ended:
	default:
		t.Fatal("Wait returned before the goroutine ended")
	}
}

func TestGoRefusesAfterClose(t *testing.T) {
	var g Group
	if g.Closed() {
		t.Fatal("a new group is closed")
	}
	g.Close()
	if !g.Closed() {
		t.Fatal("Closed after Close = false")
	}
	if g.Go("late", func() { t.Error("a refused goroutine ran") }) {
		t.Fatal("Go after Close started a goroutine")
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestGoroutineCarriesItsPprofLabel(t *testing.T) {
	var g Group
	release, running := make(chan struct{}), make(chan struct{})
	g.Go("kafka-conn", func() { close(running); <-release })
	<-running
	defer func() {
		close(release)
		g.Close()
		g.Wait(context.Background())
	}()
	var dump strings.Builder
	pprof.Lookup("goroutine").WriteTo(&dump, 1)
	if want := `"zkafka":"kafka-conn"`; !strings.Contains(dump.String(), want) {
		t.Fatalf("no goroutine labelled %s in the goroutine profile:\n%s", want, dump.String())
	}
}
