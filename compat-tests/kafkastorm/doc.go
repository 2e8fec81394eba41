// Package kafkastorm checks that the Kafka broker's memory follows the
// bytes that arrive, not the sizes that request prefixes claim.
//
// The test builds cmd/zkafka (or uses $ZKAFKA_BIN) and runs `zkafka run`
// with its default configuration on two free 127.0.0.1 ports, as a new
// user would. Sixteen connections then send a storm of malformed frames:
// most are small (truncated headers, unknown API keys, garbage bodies,
// negative sizes), and among them, one after another, size prefixes just
// under, at and over socket.request.max.bytes (and up to 2 GiB), each
// followed by up to 64 MiB of bytes that never complete the request. While
// the storm runs a franz-go producer and consumer move records through a
// topic. The test asserts that
//
//   - the broker process's peak resident memory (VmHWM in
//     /proc/PID/status) stays at or under 300 MB;
//   - every record the producer sent was acknowledged, and the consumer
//     read each one once, in order, with its key and value intact, during
//     the storm and again from the start afterwards;
//   - the broker logged the oversize prefixes, naming their size, and is
//     still serving;
//   - once the storm is over, resident memory falls back under 100 MB (the
//     buffers are given back).
//
// ZKAFKA_STORM_FRAMES overrides the number of small malformed frames
// (default 10000); the large frames are always sent. ZKAFKA_STORM_LOG=path
// keeps a copy of the server's log. ZKAFKA_BIN=path runs another binary,
// for example one built before the fix, to measure it.
package kafkastorm
