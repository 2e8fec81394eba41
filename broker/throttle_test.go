package broker

import "testing"

// TestThrottledReplicasTopicConfigs: the topic configs are validated as
// Kafka's ThrottledReplicaListValidator and give each broker its own
// partitions (throttle.go).
func TestThrottledReplicasTopicConfigs(t *testing.T) {
	if err := validateTopicConfigs(map[string]string{"leader.replication.throttled.replicas": "0:1,1:2"}); err != nil {
		t.Errorf("valid list refused: %v", err)
	}
	if err := validateTopicConfigs(map[string]string{"follower.replication.throttled.replicas": "0-1"}); err == nil {
		t.Error("invalid list accepted")
	}
	c := DefaultConfig(t.TempDir())
	c.BrokerID = 2
	tc := effectiveConfig(&c, map[string]string{"leader.replication.throttled.replicas": "0:1,1:2",
		"follower.replication.throttled.replicas": "*"})
	if tc.leaderThrottled.Has(0) || !tc.leaderThrottled.Has(1) || !tc.followerThrottled.Has(7) {
		t.Errorf("broker 2: leader %v follower %v", tc.leaderThrottled, tc.followerThrottled)
	}
	if tc := effectiveConfig(&c, nil); tc.leaderThrottled.Has(0) || tc.followerThrottled.Has(0) {
		t.Error("throttled without a config")
	}
}
