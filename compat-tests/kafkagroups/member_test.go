package kafkagroups

import (
	"context"
	"errors"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// seen is one record as a member read it.
type seen struct {
	member     string
	generation int32
	partition  int32
	offset     int64
}

// recorder collects what every member of a test read.
type recorder struct {
	mu      sync.Mutex
	byValue map[string][]seen
}

func newRecorder() *recorder { return &recorder{byValue: map[string][]seen{}} }

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for v := range r.byValue {
		if len(v) > len(prefix) && v[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// checkExactlyOnce: every record "prefix-i", i < n, was read exactly once.
func (r *recorder) checkExactlyOnce(t *testing.T, prefix string, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < n; i++ {
		if got := r.byValue[prefix+"-"+itoa(i)]; len(got) != 1 {
			t.Fatalf("record %s-%d read %d times: %+v", prefix, i, len(got), got)
		}
	}
}

// checkGenerations: within one generation, no partition was read by two
// members.
func (r *recorder) checkGenerations(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	owner := map[[2]int32]string{}
	for v, ss := range r.byValue {
		for _, s := range ss {
			k := [2]int32{s.generation, s.partition}
			if o, ok := owner[k]; ok && o != s.member {
				t.Fatalf("generation %d partition %d read by %s and %s (record %s)", s.generation, s.partition, o, s.member, v)
			}
			owner[k] = s.member
		}
	}
}

// member is one kgo group consumer polling in its own goroutine. It
// blocks rebalances while it records a poll (BlockRebalanceOnPoll), so
// the generation it records is the one the records were assigned in.
type member struct {
	name string
	cl   *kgo.Client
	rec  *recorder

	cancel context.CancelFunc
	done   chan struct{}

	connMu sync.Mutex
	conns  []net.Conn
	killed bool
}

func (e *env) startMember(name, group, topic string, rec *recorder, opts ...kgo.Opt) *member {
	e.T.Helper()
	m := &member{name: name, rec: rec, done: make(chan struct{})}
	dialer := &net.Dialer{Timeout: time.Second}
	base := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(1500 * time.Millisecond), kgo.HeartbeatInterval(150 * time.Millisecond),
		kgo.RebalanceTimeout(8 * time.Second), kgo.BlockRebalanceOnPoll(), kgo.ClientID(name),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			m.connMu.Lock()
			killed := m.killed
			m.connMu.Unlock()
			if killed {
				return nil, errors.New("member killed")
			}
			c, err := dialer.DialContext(ctx, network, host)
			if err == nil {
				m.connMu.Lock()
				m.conns = append(m.conns, c)
				m.connMu.Unlock()
			}
			return c, err
		})}
	m.cl = e.Client(append(base, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.poll(ctx)
	return m
}

func (m *member) poll(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := m.cl.PollFetches(pctx)
		cancel()
		_, gen := m.cl.GroupMetadata()
		fs.EachRecord(func(r *kgo.Record) {
			m.rec.mu.Lock()
			m.rec.byValue[string(r.Value)] = append(m.rec.byValue[string(r.Value)],
				seen{member: m.name, generation: gen, partition: r.Partition, offset: r.Offset})
			m.rec.mu.Unlock()
		})
		m.cl.AllowRebalance()
	}
}

// stop ends polling and closes the client (a clean LeaveGroup).
func (m *member) stop() {
	m.cancel()
	<-m.done
	m.cl.Close()
}

// kill cuts every connection and refuses new ones: the member vanishes
// without leaving, so only its session timeout removes it.
func (m *member) kill() {
	m.connMu.Lock()
	m.killed = true
	for _, c := range m.conns {
		c.Close()
	}
	m.connMu.Unlock()
	m.cancel()
	<-m.done
}

// waitStable waits until the group is Stable with n members whose
// assignments cover every partition of topic exactly once.
func waitStable(t *testing.T, adm *kadm.Client, group, topic string, n, partitions int) kadm.DescribedGroup {
	t.Helper()
	var last kadm.DescribedGroup
	waitFor(t, 20*time.Second, "group "+group+" stable", func() bool {
		dg, err := adm.DescribeGroups(context.Background(), group)
		if err != nil {
			return false
		}
		last = dg[group]
		if last.Err != nil || last.State != "Stable" || len(last.Members) != n {
			return false
		}
		count := map[int32]int{}
		for _, m := range last.Members {
			ca, ok := m.Assigned.AsConsumer()
			if !ok {
				return false
			}
			for _, tp := range ca.Topics {
				if tp.Topic == topic {
					for _, p := range tp.Partitions {
						count[p]++
					}
				}
			}
		}
		if len(count) != partitions {
			return false
		}
		for _, c := range count {
			if c != 1 {
				return false
			}
		}
		return true
	})
	return last
}

// assignments maps member client id → sorted partitions of topic.
func assignments(dg kadm.DescribedGroup, topic string) map[string][]int32 {
	out := map[string][]int32{}
	for _, m := range dg.Members {
		ca, _ := m.Assigned.AsConsumer()
		if ca == nil {
			continue
		}
		for _, tp := range ca.Topics {
			if tp.Topic == topic {
				out[m.ClientID] = append(out[m.ClientID], tp.Partitions...)
			}
		}
		sort.Slice(out[m.ClientID], func(i, j int) bool { return out[m.ClientID][i] < out[m.ClientID][j] })
	}
	return out
}
