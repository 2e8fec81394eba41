// Package kafkacoord tests the group coordinator on a 3-broker cluster
// with franz-go over real sockets: __consumer_offsets (created by the
// first FindCoordinator, internal, refused to produce, its records in
// Kafka's formats), the coordinator as the leader of the group's offsets
// partition (FindCoordinator, NOT_COORDINATOR elsewhere), and a consumer
// group of three whose coordinator is stopped, round after round: the
// group moves, generations never repeat, no partition has two owners in
// one generation, and nothing is read again below the last commit.
// compat-part.sh adds kcat -G across a coordinator move to `make compat`
// (kcat_test.go, build tag compat).
package kafkacoord
