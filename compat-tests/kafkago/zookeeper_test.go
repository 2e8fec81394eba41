package kafkago

import "os"

// startZooKeeper returns the ZooKeeper to test against: ZKAFKA_TEST_ZK if
// set, else an in-process quorum server.
func startZooKeeper() (string, func(), error) {
	if a := os.Getenv("ZKAFKA_TEST_ZK"); a != "" {
		return a, func() {}, nil
	}
	return startQuorum()
}
