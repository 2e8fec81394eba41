package obshttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// blocking serves /slow: it signals started, then waits for release.
func blocking(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
			io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	})
}

// TestShutdownFinishesInFlight: a request in flight when Shutdown begins
// gets its answer, and Shutdown then returns.
func TestShutdownFinishesInFlight(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	s, err := Listen("127.0.0.1:0", blocking(started, release), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	close(release)
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request: %q", body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestShutdownIsBounded: a request that never finishes holds Shutdown up
// only until its context ends.
func TestShutdownIsBounded(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	s, err := Listen("127.0.0.1:0", blocking(started, release), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	go http.Get("http://" + s.Addr().String() + "/slow")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown: %v, want the context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after its context ended")
	}
}

// TestReadyz: 200 when ready, 503 with the reason when not.
func TestReadyz(t *testing.T) {
	var notReady error = errors.New("no leader")
	s, err := Listen("127.0.0.1:0", MetricsHandler(NewRegistry(false), func() error { return notReady }), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	get := func(path string) int {
		resp, err := http.Get("http://" + s.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz not ready: %d", c)
	}
	if c := get("/healthz"); c != 200 {
		t.Errorf("/healthz: %d", c)
	}
	notReady = nil
	if c := get("/readyz"); c != 200 {
		t.Errorf("/readyz ready: %d", c)
	}
	if c := get("/metrics"); c != 200 {
		t.Errorf("/metrics: %d", c)
	}
}
