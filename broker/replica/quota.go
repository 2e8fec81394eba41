package replica

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Replication throttles (KIP-73), Kafka's ReplicationQuotaManager: a
// byte-rate bound (leader.replication.throttled.rate on a leader,
// follower.replication.throttled.rate on a follower) and the partitions
// it applies to (a topic's leader/follower.replication.throttled.replicas).
// The rate is measured as Kafka's SimpleRate over a WindowedSum:
// replication.quota.window.num samples of
// replication.quota.window.size.seconds each.

// Unlimited is a quota's bound when none is set (Kafka's default rate,
// Long.MaxValue).
const Unlimited = math.MaxInt64

// Rate is Kafka's SimpleRate of a WindowedSum: samples of size each, at
// most windows of them; a sample older than windows*size is reset. The
// rate is the sum of the samples over the time since the oldest sample
// started, but at least over one window (so a first burst is not divided
// by nearly zero). It reads no clock: times are passed in. Not safe for
// concurrent use.
type Rate struct {
	windows int
	size    time.Duration
	samples []rateSample
	current int
}

type rateSample struct {
	start time.Time
	value float64
}

// NewRate is a rate over windows samples of size (both at least 1).
func NewRate(windows int, size time.Duration) *Rate {
	return &Rate{windows: max(windows, 1), size: max(size, time.Millisecond)}
}

func (r *Rate) currentSample(now time.Time) *rateSample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, rateSample{start: now})
	}
	return &r.samples[r.current]
}

// Record adds v at now, starting a new sample when the current one is a
// window old (SampledStat.record).
func (r *Rate) Record(v float64, now time.Time) {
	s := r.currentSample(now)
	if now.Sub(s.start) >= r.size {
		r.current = (r.current + 1) % r.windows
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, rateSample{start: now})
		} else {
			r.samples[r.current] = rateSample{start: now}
		}
		s = &r.samples[r.current]
	}
	s.value += v
}

// purge resets the samples that have expired without events.
func (r *Rate) purge(now time.Time) {
	expire := time.Duration(r.windows) * r.size
	for i := range r.samples {
		if now.Sub(r.samples[i].start) >= expire {
			r.samples[i] = rateSample{start: now}
		}
	}
}

// Measure is the rate per second at now.
func (r *Rate) Measure(now time.Time) float64 {
	r.purge(now)
	sum := 0.0
	for _, s := range r.samples {
		sum += s.value
	}
	oldest := r.currentSample(now).start
	for _, s := range r.samples {
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	window := max(now.Sub(oldest), r.size)
	return sum / window.Seconds()
}

// Quota is one direction's replication throttle: a bound in bytes per
// second and the rate of the throttled partitions' bytes. Safe for
// concurrent use.
type Quota struct {
	mu    sync.Mutex
	rate  *Rate
	bound int64
}

// NewQuota is an unlimited quota measured over windows samples of size.
func NewQuota(windows int, size time.Duration) *Quota {
	return &Quota{rate: NewRate(windows, size), bound: Unlimited}
}

// SetBound sets the bound (Unlimited: none); the samples are kept, as
// Kafka's updateQuota keeps the sensor.
func (q *Quota) SetBound(bytesPerSecond int64) {
	q.mu.Lock()
	q.bound = bytesPerSecond
	q.mu.Unlock()
}

// Record counts n bytes of throttled partitions sent or fetched at now.
func (q *Quota) Record(n int64, now time.Time) {
	if n <= 0 {
		return
	}
	q.mu.Lock()
	q.rate.Record(float64(n), now)
	q.mu.Unlock()
}

// Exceeded reports whether the measured rate is over the bound (Kafka's
// isQuotaExceeded: a violation is a rate above the bound).
func (q *Quota) Exceeded(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bound != Unlimited && q.rate.Measure(now) > float64(q.bound)
}

// Throttled is the partitions of a topic a throttle applies to on one
// broker: all of them, or those listed.
type Throttled struct {
	All   bool
	Parts []int32
}

// Has reports whether partition p is throttled.
func (t Throttled) Has(p int32) bool {
	if t.All {
		return true
	}
	for _, q := range t.Parts {
		if q == p {
			return true
		}
	}
	return false
}

var throttledEntry = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// ErrThrottledReplicas is Kafka's ThrottledReplicaListValidator message
// (after the config name).
var ErrThrottledReplicas = errors.New("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")

// CheckThrottledReplicas validates a leader/follower.replication.throttled.replicas
// value as Kafka's ThrottledReplicaListValidator: "*", or entries
// partition:broker separated by commas (spaces around them allowed).
func CheckThrottledReplicas(v string) error {
	items := strings.Split(v, ",")
	joined := ""
	ok := true
	for _, it := range items {
		it = strings.TrimSpace(it)
		joined += it
		ok = ok && throttledEntry.MatchString(it)
	}
	if ok || joined == "*" {
		return nil
	}
	return ErrThrottledReplicas
}

// ParseThrottledReplicas is the partitions of a valid throttled-replicas
// value that broker throttles (Kafka's parseThrottledPartitions): "*"
// all, else those whose entry names broker.
func ParseThrottledReplicas(v string, broker int32) Throttled {
	v = strings.TrimSpace(v)
	if v == "*" {
		return Throttled{All: true}
	}
	var t Throttled
	for _, it := range strings.Split(v, ",") {
		p, b, ok := strings.Cut(strings.TrimSpace(it), ":")
		pi, perr := strconv.ParseInt(p, 10, 32)
		bi, berr := strconv.ParseInt(b, 10, 32)
		if ok && perr == nil && berr == nil && int32(bi) == broker {
			t.Parts = append(t.Parts, int32(pi))
		}
	}
	return t
}
