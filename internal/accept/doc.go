// Package accept is the one accept loop of zkafka's listeners: the
// ZooKeeper client port (quorum.Server.Serve), the ZooKeeper peer port
// (quorum's peer transport) and the Kafka listener (broker.Broker.Serve).
//
// A server process must outlive a moment without file descriptors: when
// the process (EMFILE) or the system (ENFILE) is out of them, or the kernel
// is short of buffers or memory, accept fails, and it succeeds again once
// connections close. So Loop retries such errors with a backoff (5 ms
// doubling to 1 s, reset by the next accepted connection) instead of
// returning, as net/http's Server.Serve does; only an error that will not
// go away (the listener was closed) ends it.
//
//	for {
//	    conn, err := l.Accept()
//	    err == nil        → handle(conn); backoff = 0
//	    done is closed    → return ErrClosed
//	    Temporary(err)    → log, wait backoff (or until done), retry
//	    otherwise         → return err
//	}
//
// Temporary errors: timeouts (net.Error.Timeout), EMFILE, ENFILE, ENOBUFS,
// ENOMEM, ECONNABORTED and ECONNRESET (a connection that went away in the
// backlog), and the network errors accept(2) says Linux passes on from the
// new socket (ENETDOWN, EPROTO, ENOPROTOOPT, EHOSTDOWN, EHOSTUNREACH,
// EOPNOTSUPP, ENETUNREACH), which the man page asks to treat like EAGAIN.
package accept
