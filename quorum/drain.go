package quorum

import (
	"context"
	"time"
)

// shutdownDrain bounds how long Shutdown lets the client connections
// finish the requests they have in flight (a write waiting for its
// commit, a sync for its read index) before it closes them: a client that
// gets its reply need not retry a write of unknown outcome. Shutdown's
// own context bounds it too.
const shutdownDrain = 2 * time.Second

// draining reports whether Shutdown has begun: the connections read no
// more requests and answer those they have.
func (s *Server) draining() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// drain stops c reading requests: its reader's read ends at once (a past
// deadline) and, seeing the server drain, hands the calls it has to the
// writer, which answers them and then closes the connection.
func (c *conn) drain() {
	c.nc.SetReadDeadline(time.Now())
}

// drainConnections lets conns finish their calls within shutdownDrain and
// ctx, then closes those left; it returns the goroutines' wait error.
func (s *Server) drainConnections(ctx context.Context, conns []*conn) error {
	for _, c := range conns {
		c.drain()
	}
	drainCtx, cancel := context.WithTimeout(ctx, shutdownDrain)
	defer cancel()
	if err := s.goroutines.Wait(drainCtx); err == nil || ctx.Err() != nil {
		return err
	}
	for _, c := range conns {
		c.close("server shutting down")
	}
	return s.goroutines.Wait(ctx)
}
