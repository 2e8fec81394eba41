// Package kafkacrash kills the Kafka broker with SIGKILL under produce load
// and checks what survives.
//
// The broker runs as a real child process (this test binary re-executed:
// TestMain sees ZKAFKA_CRASH_BROKER_PROPS and runs broker.LoadConfig,
// broker.New and ListenAndServe on that server.properties), on a fixed
// 127.0.0.1 port so that the producer's seed stays valid across restarts;
// ZooKeeper (quorum) runs in the test process. A franz-go idempotent
// producer (acks=all) keeps producing while the broker is killed at a
// random moment and restarted, several rounds. Then:
//
//   - the log recovers: after each restart every partition's high
//     watermark is at least one past the highest offset acknowledged
//     before the kill;
//   - every acknowledged record is in the log exactly once, at the offset
//     its acknowledgement named, and nothing else is there (every record
//     is eventually acknowledged: franz-go retries without limit);
//   - offsets are 0..hw-1 with no gap or duplicate;
//   - the idempotent producer continues: no record fails, and every
//     record in the log carries the producer id it started with (no
//     OUT_OF_ORDER_SEQUENCE_NUMBER made it reset its id).
//
// What an acknowledgement promises depends on the flush policy, as in
// Kafka: with log.flush.interval.messages=1 the batch is fsynced before the
// answer, so it survives a power cut too; with the default (no fsync by
// count or time) it is in the page cache when answered, which a process
// kill does not lose — only a machine crash could. SIGKILL is what this
// test can do, so both policies must keep every acknowledged record; the
// test runs both.
//
// ZKAFKA_CRASH_ROUNDS overrides the number of kills per policy.
package kafkacrash
