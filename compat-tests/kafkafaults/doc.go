// Package kafkafaults is the fault table of issue 10: a 3-broker cluster
// of real processes (compat-tests/internal/kcluster), a topic with 6
// partitions, RF 3, min.insync.replicas 2, a franz-go idempotent acks=all
// producer at a steady rate and a consumer reading throughout
// (compat-tests/internal/kworkload), and one fault at a time, cycled:
//
//	leader-kill        kill -9 of a partition leader, then restart it
//	controller-kill    kill -9 of the controller, then restart it
//	leader-pause       SIGSTOP of a leader beyond its ZooKeeper session,
//	                   then SIGCONT: it must not acknowledge writes after it
//	                   was replaced, and rejoins as a follower
//	follower-cut       a follower's replica fetches (its Fetch requests'
//	                   replica id) cut at the other brokers' inter-broker
//	                   proxies, blackhole and refuse in turn: its ISR
//	                   membership ends after replica.lag.time.max.ms (the
//	                   state znodes' isr) and returns after healing
//	rolling-restart    SIGTERM (controlled shutdown) and restart of every
//	                   broker in turn
//
// After each fault's cycles a fresh consumer reads every partition and
// kworkload.Check asserts that every acknowledged record is there once, in
// order, at its acknowledged offset, with no offset gap, and that nothing
// the consumer saw vanished. Each fault prints one line: acknowledged /
// lost / duplicated / consumer-seen-then-vanished, and its failover times.
//
// The table runs in make test on zkafka's ZooKeeper (about three minutes,
// the faults in parallel), and in make compat on Apache ZooKeeper 3.8
// (ZKAFKA_TEST_ZK, fewer cycles):
//
//	go test -count=1 -timeout 20m -v -run TestFaultTable ./compat-tests/kafkafaults/
//
// ZKAFKA_FAULT_CYCLES sets the cycles per fault (default 10); the faults
// run as parallel subtests on separate clusters (-parallel 1 runs them one
// at a time); -run 'TestFaultTable/leader-kill' runs one.
package kafkafaults
