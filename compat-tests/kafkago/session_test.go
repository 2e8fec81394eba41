package kafkago

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"github.com/twmb/franz-go/pkg/kerr"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestSessionExpiryReregisters cuts the broker off from ZooKeeper (a proxy
// between them drops every connection and refuses new ones) until the
// server expires the broker's session, which deletes its ephemerals
// /brokers/ids/0 and /controller. When the path is back, go-zookeeper
// learns of the expiry and opens a new session: the broker must register
// again, with the same endpoint, win /controller again and keep serving.
//
// Variants make the first registration attempt on the new session fail:
// the create is lost before it reaches ZooKeeper (the broker must retry),
// or it is applied but its reply is lost (the retry finds the node, owned
// by its own session, and must take it as registered, as Kafka's
// checkedEphemeralCreate does).
func TestSessionExpiryReregisters(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop dropMode
	}{
		{"clean", dropNone},
		{"create-lost", dropCreateRequest},
		{"create-reply-lost", dropCreateReply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has its own proxy, broker and chroot
			sessionExpiry(t, tc.drop)
		})
	}
}

func sessionExpiry(t *testing.T, drop dropMode) {
	zkAddr := kafkaenv.ZooKeeper()
	px := newZKProxy(t, zkAddr)
	e := startBroker(t, func(c *broker.Config) {
		c.ZooKeeperConnect = px.addr() + c.ZooKeeperConnect[len(zkAddr):]
		c.ZooKeeperSessionTimeout = 4 * time.Second // ZooKeeper's usual minimum (2 × tickTime)
	})
	createTopic(t, e, "survivor", 1)
	c := e.Client(kgo.DefaultProduceTopic("survivor"))
	produceSync(t, c, &kgo.Record{Value: []byte("before")})

	z := e.ZK()
	regPath := e.Path("/brokers/ids/0")
	before, _, err := z.Get(regPath)
	if err != nil {
		t.Fatalf("registration before: %v", err)
	}

	px.pause()
	waitZK(t, 30*time.Second, "the broker's session to expire", func() bool {
		ok, _, err := z.Exists(regPath)
		return err == nil && !ok
	})
	px.resume(drop)
	waitZK(t, 30*time.Second, "the broker to register again", func() bool {
		ok, _, err := z.Exists(regPath)
		return err == nil && ok
	})
	after, st, err := z.Get(regPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.EphemeralOwner == 0 {
		t.Fatalf("%s is not ephemeral", regPath)
	}
	var b0, b1 map[string]any
	if json.Unmarshal(before, &b0) != nil || json.Unmarshal(after, &b1) != nil {
		t.Fatalf("registration JSON: %s / %s", before, after)
	}
	if b0["host"] != b1["host"] || b0["port"] != b1["port"] || b1["version"] != float64(5) {
		t.Fatalf("registration after expiry %s, before %s", after, before)
	}
	waitZK(t, 30*time.Second, "the broker to be controller again", func() bool {
		data, _, err := z.Get(e.Path("/controller"))
		var ctl struct {
			BrokerID int `json:"brokerid"`
		}
		return err == nil && json.Unmarshal(data, &ctl) == nil && ctl.BrokerID == 0
	})
	// Registered again at the first retry, without waiting for its own
	// node to expire and without an error. When the reply was lost the
	// node is there before the broker's retry (after its backoff) takes
	// it as its own, so the second "registered" can come after the
	// controller election: wait for it, bounded.
	waitZK(t, 30*time.Second, "the broker to log its second registration", func() bool {
		return e.Logs.Count("INFO broker registered") >= 2
	})
	if n := e.Logs.Count("INFO broker registered"); n != 2 {
		t.Errorf("registered %d times, want 2: %q", n, e.Logs.All())
	}
	if e.Logs.Count("ERROR") > 0 || e.Logs.Count("WARN broker id still registered") > 0 {
		t.Errorf("broker log: %q", e.Logs.All())
	}
	if want := map[dropMode]int{dropNone: 0, dropCreateRequest: 1, dropCreateReply: 1}[drop]; e.Logs.Count("WARN re-registering") != want {
		t.Errorf("want %d failed registration attempts: %q", want, e.Logs.All())
	}
	// Still serving, and still following ZooKeeper: a topic created by
	// another tool after the expiry is opened (the watches were set again).
	produceSync(t, c, &kgo.Record{Value: []byte("after")})
	got := consumeN(t, e, "survivor", 2)
	if string(got[0].Value) != "before" || string(got[1].Value) != "after" {
		t.Fatalf("records %q %q", got[0].Value, got[1].Value)
	}
	// The broker learns it is live again from its /brokers/ids watch
	// after re-registering: until then a create is INVALID_REPLICATION_FACTOR.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := e.Admin().CreateTopic(ctxT(t), 2, 1, nil, "born-after")
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.InvalidReplicationFactor) || time.Now().After(deadline) {
			t.Fatalf("create born-after: %v", err)
		}
	}
	produceSync(t, e.Client(kgo.DefaultProduceTopic("born-after")), &kgo.Record{Value: []byte("x")})
}

func waitZK(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// zkProxy forwards TCP connections to a ZooKeeper server; pause drops them
// all and makes new ones close at once, as a network partition would.
type zkProxy struct {
	l      net.Listener
	target string
	mu     struct {
		sync.Mutex
		paused bool
		drop   dropMode // applied to the next create (then reset)
		conns  map[net.Conn]struct{}
	}
}

// dropMode is what the proxy does to the next create request.
type dropMode int

const (
	dropNone          dropMode = iota
	dropCreateRequest          // close the connection instead of forwarding it
	dropCreateReply            // forward it, then close the client side before the reply
)

func newZKProxy(t *testing.T, target string) *zkProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &zkProxy{l: l, target: target}
	p.mu.conns = map[net.Conn]struct{}{}
	go p.serve()
	t.Cleanup(func() { l.Close(); p.dropAll() })
	return p
}

func (p *zkProxy) addr() string { return p.l.Addr().String() }

func (p *zkProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		paused := p.mu.paused
		p.mu.Unlock()
		if paused {
			c.Close()
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.mu.conns[c], p.mu.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipeRequests(s, c)
		go p.pipe(c, s)
	}
}

func (p *zkProxy) pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *zkProxy) pause() {
	p.mu.Lock()
	p.mu.paused = true
	p.mu.Unlock()
	p.dropAll()
}

func (p *zkProxy) resume(drop dropMode) {
	p.mu.Lock()
	p.mu.paused, p.mu.drop = false, drop
	p.mu.Unlock()
}

// pipeRequests forwards ZooKeeper frames from a client (the first is the
// connect request; the others start with xid and opcode) and applies the
// armed dropMode to the first create or create2.
func (p *zkProxy) pipeRequests(server, client net.Conn) {
	closeServer := true
	defer func() {
		client.Close()
		if closeServer {
			server.Close()
		}
	}()
	r := bufio.NewReader(client)
	for first := true; ; first = false {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > 1<<21 {
			return
		}
		frame := make([]byte, 4+n)
		copy(frame, size[:])
		if _, err := io.ReadFull(r, frame[4:]); err != nil {
			return
		}
		mode := dropNone
		if op := int32(-1); !first && n >= 8 {
			if op = int32(binary.BigEndian.Uint32(frame[8:12])); op == 1 || op == 15 {
				p.mu.Lock()
				mode, p.mu.drop = p.mu.drop, dropNone
				p.mu.Unlock()
			}
		}
		if mode == dropCreateRequest {
			return
		}
		if _, err := server.Write(frame); err != nil {
			return
		}
		if mode == dropCreateReply {
			// The server applies the create; its reply finds the client
			// side closed and the other pipe closes the server side.
			closeServer = false
			return
		}
	}
}

func (p *zkProxy) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.mu.conns {
		c.Close()
	}
	clear(p.mu.conns)
}
