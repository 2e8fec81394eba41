package kafkago

import (
	"encoding/base64"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"
)

var openACL = zk.WorldACL(zk.PermAll)

func base64URL(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func recordTo(topic string, partition int32, value string) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: partition, Value: []byte(value)}
}
