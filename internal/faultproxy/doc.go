// Package faultproxy is a fault-injecting TCP proxy: it listens on
// 127.0.0.1 (port 0, or NewAt's address), forwards every connection to one
// target, and on command cuts, heals or delays traffic, so a test can
// partition a broker from its peers without touching the broker. It is the
// one proxy of the tree: zkafkatest's links (one per direction of each
// pair of members) are faultproxy proxies, and so are the proxies the
// process-level tests (compat-tests/internal/kcluster) put in front of
// their brokers' inter-broker listeners.
//
// A proxy's target can move (SetTarget: a restarted server listens
// elsewhere) or be down (""): its connections are then reset, as a dead
// process's port resets them. Reset ends the open connections and keeps
// the rules; Open, Seen and SeenReplica count connections.
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
// # Kafka connections
//
// A Kafka proxy (NewKafka) reads the client's side as whole request frames.
// It reads the first before it dials the target and keys the connection by
// its client id, so a cut can name a class of connections by client id
// prefix (CutClients) and leave the rest alone; and it decodes every Fetch
// request (kmsg) for its replica id — ReplicaID up to v14, ReplicaState.ID
// from v15 (KIP-903) — so a cut can name one broker's replica fetches
// (CutReplica) whatever client id its fetcher sends. A Kafka request
// frame starts
//
//	int32 size | int16 api_key | int16 api_version | int32 correlation_id |
//	int16 client_id length (-1 = null) | client_id bytes | ...
//
// in every request header version from v1 on (v2, the flexible one, puts
// its tagged fields after the client id). Kafka's replica fetcher sends
// client id "broker-{id}-fetcher-{n}" (ReplicaFetcherThread's), so
// CutClients("broker-3-fetcher", ...) selects Kafka's broker 3 fetchers;
// zkafka's fetcher may name itself otherwise, which is why the fault tests
// use CutReplica, and check SeenReplica before they count a cut as
// effective. A connection is a replica's from its first Fetch on (the
// ApiVersions a client sends first passes); its Fetch frame is held or
// the connection reset before that frame reaches the target.
//
// Rules are kept per client id prefix ("" is every connection) and per
// replica id; a connection takes the most severe rule that selects it
// (Refuse over Blackhole over pass). A connection whose first request has
// not arrived yet is held: it has no client id to match.
package faultproxy
