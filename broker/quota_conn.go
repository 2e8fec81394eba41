package broker

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// Client quotas on the request pipeline, as Kafka 3.7 applies them
// (KafkaApis, RequestHandlerHelper, SocketServer):
//
//   - every request is metered against request_percentage (its time on
//     the connection's goroutine, less the time parked waiting for
//     replicas or data, as a percentage of one second) unless it is exempt
//     (the inter-broker APIs, a follower's Fetch, ApiVersions and SASL,
//     Produce with acks=0);
//   - Produce also meters its request's bytes against producer_byte_rate,
//     and a consumer's Fetch its records' bytes against consumer_byte_rate;
//     they take the larger of the two throttle times; a throttled Fetch
//     answers with no records (they are fetched again later, nothing is
//     lost) and takes its bytes back, as Kafka does;
//   - a throttled response is sent at once with throttle_time_ms set
//     (KIP-219: the client backs off that long itself when its version
//     says so, Produce v6+, Fetch v8+, ...), and the connection is muted
//     for the throttle time: its next request is not read until it has
//     passed. Kafka 3.7 does this for every version, so an old client that
//     does not back off waits in its socket instead.
//
// The throttle time is written into the encoded response: at the
// position kmsg's encoding puts throttle_time_ms for the key and version
// (throttleFieldAt), which the Produce and Fetch handlers fill themselves.

// quotaReq is the quota state of the request being handled (reader
// goroutine only).
type quotaReq struct {
	start  time.Time
	bytes  int           // the request's size, header included
	waited time.Duration // time parked (acks=all, long poll): not the client's
	// throttleMs is set by a handler that metered the request itself
	// (Produce, Fetch; -1 when not).
	throttleMs int64
}

// beginQuota starts the quota state of a request of size bytes.
func (c *conn) beginQuota(size int) {
	c.quota = quotaReq{start: time.Now(), bytes: size, throttleMs: -1}
}

// parked adds the time since start to the request's parked time.
func (c *conn) parked(start time.Time) { c.quota.waited += time.Since(start) }

// quotaUser is the connection's principal name as quota entities name it
// (sanitized; ANONYMOUS without authentication).
func (c *conn) quotaUser() string {
	return sanitize(strings.TrimPrefix(c.principal(), "User:"))
}

// requestPercent is the request's time so far as request_percentage
// counts it. JoinGroup and SyncGroup park on the reader goroutine until
// the group's phase ends (the coordinator's handlers), which Kafka keeps
// in a purgatory, off its threads: their time is not counted (they are
// still throttled when the client is over its quota).
func (c *conn) requestPercent(key int16) float64 {
	if key == kproto.KeyJoinGroup || key == kproto.KeySyncGroup {
		return 0
	}
	busy := time.Since(c.quota.start) - c.quota.waited
	return max(busy.Seconds(), 0) * 100
}

// throttleBytes meters a Produce's or a consumer Fetch's bytes against
// kind and the request against request_percentage, and returns the
// larger throttle time (ms).
func (c *conn) throttleBytes(hdr *kproto.RequestHeader, kind quotaKind, n int64, withRequest bool) int64 {
	q := c.b.quotas
	if q == nil {
		c.quota.throttleMs = 0
		return 0
	}
	user, client := c.quotaUser(), string(hdr.ClientID)
	bw := q.record(kind, user, client, float64(n))
	var rq int64
	if withRequest {
		rq = q.record(quotaRequest, user, client, c.requestPercent(hdr.APIKey))
	}
	c.quota.throttleMs = max(bw, rq)
	return c.quota.throttleMs
}

// endQuota meters a request the handler did not, writes the throttle time
// into resp, and returns how long the connection stays muted.
func (c *conn) endQuota(hdr *kproto.RequestHeader, resp *response) time.Duration {
	ms := c.quota.throttleMs
	if ms < 0 {
		q := c.b.quotas
		if q == nil || quotaExempt(hdr.APIKey) || hdr.APIKey == kproto.KeyFetch && c.fetchReq.ReplicaID >= 0 {
			return 0 // a follower's fetch that failed early is exempt too
		}
		ms = q.record(quotaRequest, c.quotaUser(), string(hdr.ClientID), c.requestPercent(hdr.APIKey))
		if ms > 0 && resp != nil {
			patchThrottle(resp.buf, hdr.APIKey, hdr.APIVersion, ms)
		}
	}
	return time.Duration(ms) * time.Millisecond
}

// muteFor keeps the connection from reading its next request for d
// (Kafka's muted channel). It reports false on shutdown.
func (c *conn) muteFor(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	return c.b.sleep(d)
}

// quotaExempt are the requests Kafka sends with sendResponseExemptThrottle
// or before a session exists: the brokers' own, and the connection setup.
func quotaExempt(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.LeaderAndISR, kmsg.StopReplica, kmsg.UpdateMetadata, kmsg.ControlledShutdown, kmsg.AlterPartition,
		kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		return true
	}
	return false
}

// clampThrottle is a throttle time as the int32 of the wire.
func clampThrottle(ms int64) int32 { return int32(min(ms, 1<<31-1)) }

// patchThrottle writes ms into the throttle_time_ms of an encoded response
// frame (size, correlation id, header tags, body), if it has the field at
// a known place.
func patchThrottle(frame []byte, key, version int16, ms int64) {
	at, ok := throttleFieldAt(key, version)
	if !ok {
		return
	}
	at += 8
	if kproto.ResponseHeaderFlexible(key, version, nil) {
		at++
	}
	if at+4 <= len(frame) {
		binary.BigEndian.PutUint32(frame[at:], uint32(clampThrottle(ms)))
	}
}

// throttleOffsets[key][version] is where throttle_time_ms starts in the
// body of the response, -1 where it has none (or it is not at a fixed
// place: Produce, whose handler sets it, and ApiVersions).
var throttleOffsets struct {
	once sync.Once
	at   map[int16][]int
}

// throttleSentinel is a value no empty response holds, to find the field.
const throttleSentinel = 0x7E5D3C1B

// throttleFieldAt is the offset of throttle_time_ms in the body of key's
// response at version, found once per key and version by encoding an
// empty kmsg response with the field set to throttleSentinel. In every
// response but Produce and ApiVersions only fixed-size fields precede it
// (none, or OffsetDelete's error code), so the offset holds for every
// response of that version.
func throttleFieldAt(key, version int16) (int, bool) {
	throttleOffsets.once.Do(func() {
		throttleOffsets.at = map[int16][]int{}
		for k, d := range apis {
			offs := make([]int, d.max+1)
			for v := range offs {
				offs[v] = findThrottleField(k, int16(v))
			}
			throttleOffsets.at[k] = offs
		}
	})
	offs := throttleOffsets.at[key]
	if version < 0 || int(version) >= len(offs) || offs[version] < 0 {
		return 0, false
	}
	return offs[version], true
}

func findThrottleField(key, version int16) int {
	if key == kproto.KeyProduce || key == kproto.KeyApiVersions {
		return -1
	}
	r := kmsg.ResponseForKey(key)
	tr, ok := r.(kmsg.SetThrottleResponse)
	if r == nil || !ok {
		return -1
	}
	r.SetVersion(version)
	tr.SetThrottle(throttleSentinel)
	return bytes.Index(r.AppendTo(nil), binary.BigEndian.AppendUint32(nil, throttleSentinel))
}

// throttleFetch meters a consumer's fetch of n record bytes (followers are
// exempt) and sets the throttle time in head. A throttled fetch releases
// what it read and reports true: it answers with no records, and its
// bytes are taken back from the meter, as Kafka's.
func (c *conn) throttleFetch(hdr *kproto.RequestHeader, req *kproto.FetchRequest, head *kproto.FetchResponseHead, n int64) bool {
	if req.ReplicaID >= 0 {
		c.quota.throttleMs = 0
		return false
	}
	ms := c.throttleBytes(hdr, quotaFetch, n, true)
	head.ThrottleMillis = clampThrottle(ms)
	if ms <= 0 {
		return false
	}
	c.b.quotas.unrecord(quotaFetch, c.quotaUser(), string(hdr.ClientID), float64(n))
	c.fetch.releaseRanges()
	return true
}

// capFetchToQuota caps a consumer's max_bytes to what its consumer_byte_rate
// allows in one window, as Kafka does, so that one fetch is not sure to be
// throttled.
func (c *conn) capFetchToQuota(hdr *kproto.RequestHeader, req *kproto.FetchRequest) {
	q := c.b.quotas
	if q == nil || req.ReplicaID >= 0 {
		return
	}
	if most, ok := q.maxInWindow(quotaFetch, c.quotaUser(), string(hdr.ClientID)); ok && most < float64(req.MaxBytes) {
		req.MaxBytes = int32(max(most, 1))
	}
}
