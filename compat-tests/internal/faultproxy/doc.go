// Package faultproxy is a fault-injecting TCP proxy for process-level
// tests: it listens on 127.0.0.1 (port 0), forwards every connection to one
// target, and on command cuts, heals or delays traffic, so a test can
// partition a broker from its peers without touching the broker.
//
// A cut has two modes, as a network failure has:
//
//	Refuse     open connections are reset (SO_LINGER 0) and new ones are
//	           accepted and reset at once: the peer sees ECONNRESET, as
//	           from a host that is up with nothing listening.
//	Blackhole  connections stay open but nothing passes in either
//	           direction: the proxy stops reading, so the kernel buffers
//	           fill and the sender blocks, as behind a dropped route. What
//	           it had already read waits; Heal delivers it, in order, as
//	           TCP's retransmission would after the partition heals.
//
// Delay adds a latency to every chunk forwarded (the chunk is sent when it
// is due), which keeps the throughput and lengthens the round trip.
//
// # Kafka client ids
//
// A Kafka proxy (NewKafka) reads the first request header of each
// connection before it dials the target and keys the connection by its
// client id, so a cut can name a class of connections by client id prefix
// (CutClients) and leave the rest alone. A Kafka request frame starts
//
//	int32 size | int16 api_key | int16 api_version | int32 correlation_id |
//	int16 client_id length (-1 = null) | client_id bytes | ...
//
// in every request header version from v1 on (v2, the flexible one, puts
// its tagged fields after the client id). Kafka's replica fetcher sends
// client id "broker-{id}-fetcher-{n}" (ReplicaFetcherThread's name), so
// "broker-3-fetcher" selects broker 3's fetcher connections whatever n is.
// That prefix is an assumption about the follower's client id: tests that
// rely on it check that a connection with that prefix was seen (Seen)
// before they count a cut as effective.
//
// Rules are kept per prefix ("" is every connection); a connection takes the
// most severe rule whose prefix its client id starts with (Refuse over
// Blackhole over pass). A connection whose first header has not arrived yet
// is held: it has no client id to match.
package faultproxy
