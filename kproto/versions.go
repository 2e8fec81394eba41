package kproto

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// API keys the broker may serve.
const (
	KeyProduce              int16 = 0
	KeyFetch                int16 = 1
	KeyListOffsets          int16 = 2
	KeyMetadata             int16 = 3
	KeyOffsetCommit         int16 = 8
	KeyOffsetFetch          int16 = 9
	KeyFindCoordinator      int16 = 10
	KeyJoinGroup            int16 = 11
	KeyHeartbeat            int16 = 12
	KeyLeaveGroup           int16 = 13
	KeySyncGroup            int16 = 14
	KeyDescribeGroups       int16 = 15
	KeyListGroups           int16 = 16
	KeySaslHandshake        int16 = 17
	KeyApiVersions          int16 = 18
	KeyCreateTopics         int16 = 19
	KeyDeleteTopics         int16 = 20
	KeyDeleteRecords        int16 = 21
	KeyInitProducerID       int16 = 22
	KeyOffsetForLeaderEpoch int16 = 23
	KeyDescribeConfigs      int16 = 32
	KeyCreatePartitions     int16 = 37
	KeyDeleteGroups         int16 = 42
	KeyOffsetDelete         int16 = 47
	KeyDescribeCluster      int16 = 60
)

// Admin keys of the log and its replicas.
const (
	KeyDescribeLogDirs         int16 = 35
	KeyDescribeProducers       int16 = 61
	KeyDescribeTopicPartitions int16 = 75
)

// The config-altering keys, in their own block so the table above keeps
// its alignment.
const (
	KeyAlterConfigs            int16 = 33
	KeyIncrementalAlterConfigs int16 = 44
)

// The client quota keys.
const (
	KeyDescribeClientQuotas int16 = 48
	KeyAlterClientQuotas    int16 = 49
)

// The SASL and SCRAM credential keys.
const (
	KeySaslAuthenticate             int16 = 36
	KeyDescribeUserScramCredentials int16 = 50
	KeyAlterUserScramCredentials    int16 = 51
)

// Version ranges of the hand-written codecs in this package. The broker may
// advertise less; it must not advertise more for these keys.
const (
	ProduceMaxVersion     int16 = 10
	FetchMaxVersion       int16 = 13
	ListOffsetsMaxVersion int16 = 7
	MetadataMaxVersion    int16 = 12
	ApiVersionsMaxVersion int16 = 3
)

// flexibleFrom[key] is the first flexible (KIP-482) version of key, or -1 if
// kmsg knows no flexible version. Kafka never drops flexibility once a
// message gains it, so "version >= flexibleFrom" also covers versions newer
// than kmsg knows (which matters for ApiVersions: a client asking v4+ must
// still have its header parsed as v2).
var flexibleFrom = buildFlexibleTable()

func buildFlexibleTable() [maxKey + 1]int16 {
	var t [maxKey + 1]int16
	for key := range t {
		t[key] = -1
		req := kmsg.RequestForKey(int16(key))
		if req == nil {
			continue
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			if req.IsFlexible() {
				t[key] = v
				break
			}
		}
	}
	return t
}

// maxKey bounds the flexible table; kmsg keys are well below it.
const maxKey = 127

// IsFlexible reports whether (key, version) uses flexible encoding: compact
// strings, arrays and bytes, tagged fields, and request header v2. Unknown
// keys are not flexible.
func IsFlexible(key, version int16) bool {
	if key < 0 || key > maxKey {
		return false
	}
	from := flexibleFrom[key]
	return from >= 0 && version >= from
}

// FlexibleFrom returns the first flexible version of key, or -1.
func FlexibleFrom(key int16) int16 {
	if key < 0 || key > maxKey {
		return -1
	}
	return flexibleFrom[key]
}

// checkVersion returns an error when version is outside [0, max].
func checkVersion(key, version, maxVersion int16) error {
	if version < 0 || version > maxVersion {
		return &VersionError{Key: key, Version: version}
	}
	return nil
}

// VersionError is returned by hand-written decoders for a version they do not
// implement. The broker should answer UNSUPPORTED_VERSION or close.
type VersionError struct {
	Key, Version int16
}

func (e *VersionError) Error() string {
	return "kproto: unsupported version " + strconv.Itoa(int(e.Version)) + " of " + kmsg.NameForKey(e.Key)
}
