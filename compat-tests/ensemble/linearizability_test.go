package ensemble

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// The linearizability check: clients run get (sync, then getData: plain
// reads in ZooKeeper are only sequentially consistent), set and
// compare-and-set-by-version on a few keys while faults happen; porcupine
// checks the recorded history against a register-with-version model, one
// partition per key. An operation whose outcome is unknown (connection
// loss) may have happened at any time after its call: its return time is
// infinite, and a read with an unknown outcome is left out.

type linInput struct {
	op  string // "get", "set", "cas"
	key string
	val string
	ver int32 // cas: the expected version
}

type linOutput struct {
	val     string
	ver     int32
	ok      bool // cas: applied (else BadVersion)
	unknown bool
}

type linState struct {
	val string
	ver int32
}

var linModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(linInput).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return linState{val: "init"} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(linState), input.(linInput), output.(linOutput)
		switch in.op {
		case "get":
			return out.val == st.val && out.ver == st.ver, st
		case "set":
			next := linState{val: in.val, ver: st.ver + 1}
			return out.unknown || out.ver == next.ver, next
		case "cas":
			if st.ver != in.ver {
				return out.unknown || !out.ok, st
			}
			next := linState{val: in.val, ver: st.ver + 1}
			return out.unknown || (out.ok && out.ver == next.ver), next
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%+v -> %+v", input, output)
	},
}

// linHistory records operations from several clients.
type linHistory struct {
	base time.Time
	mu   sync.Mutex
	ops  []porcupine.Operation
	// writes records, per client, the calls and returns of acknowledged
	// writes (for the minority check).
	acked []ackedWrite
}

type ackedWrite struct {
	client        int
	call, return_ time.Time
}

func (h *linHistory) add(client int, in linInput, out linOutput, call, ret time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := ret.Sub(h.base).Nanoseconds()
	if out.unknown {
		if in.op == "get" {
			return
		}
		r = math.MaxInt64
	} else if in.op != "get" {
		h.acked = append(h.acked, ackedWrite{client: client, call: call, return_: ret})
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call.Sub(h.base).Nanoseconds(), Output: out, Return: r})
}

// linClient runs random operations on keys until stop.
func linClient(h *linHistory, id int, c *zk.Conn, keys []string, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	vers := map[string]int32{}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		key := keys[rng.IntN(len(keys))]
		in := linInput{key: key, val: fmt.Sprintf("c%d-%d", id, n)}
		var out linOutput
		call := time.Now()
		var err error
		switch r := rng.IntN(10); {
		case r < 4:
			in.op = "get"
			if _, err = c.Sync(key); err == nil {
				var d []byte
				var st *zk.Stat
				d, st, err = c.Get(key)
				if err == nil {
					out.val, out.ver = string(d), st.Version
					vers[key] = st.Version
				}
			}
		case r < 7:
			in.op = "set"
			var st *zk.Stat
			st, err = c.Set(key, []byte(in.val), -1)
			if err == nil {
				out.ver = st.Version
			}
		default:
			in.op, in.ver = "cas", vers[key]
			var st *zk.Stat
			st, err = c.Set(key, []byte(in.val), in.ver)
			switch {
			case err == nil:
				out.ok, out.ver = true, st.Version
			case errors.Is(err, zk.ErrBadVersion):
				err = nil
			}
		}
		if err != nil {
			out.unknown = true
		}
		h.add(id, in, out, call, time.Now())
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		} else {
			time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
		}
	}
}

// check runs porcupine on the history and fails the test on a violation.
func (h *linHistory) check(t *testing.T, name string) {
	t.Helper()
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.ops...)
	h.mu.Unlock()
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(linModel, ops, 90*time.Second)
	unknown := 0
	for _, op := range ops {
		if op.Return == math.MaxInt64 {
			unknown++
		}
	}
	msg := fmt.Sprintf("linearizability %s: 1 history, %d operations (%d with unknown outcome) checked in %v: %v",
		name, len(ops), unknown, time.Since(start).Round(time.Millisecond), res)
	linChecked.histories.Add(1)
	linChecked.operations.Add(int64(len(ops)))
	t.Log(msg)
	fmt.Println("ensemble " + msg)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		t.Fatalf("history is not linearizable (%s)", name)
	default:
		t.Logf("porcupine could not decide within the time limit")
	}
	if len(ops) < 100 {
		t.Fatalf("only %d operations recorded", len(ops))
	}
}

// linChecked counts what porcupine checked in this test binary; TestMain
// prints the totals.
var linChecked struct{ histories, operations atomic.Int64 }

// linRun is a set of linearizability clients running during a fault.
type linRun struct {
	h     *linHistory
	stop  chan struct{}
	wg    sync.WaitGroup
	conns []*zk.Conn
}

// startLin creates keys (value "init") and starts n clients on them,
// client i connected first to server i mod 3 of e and free to move to the
// others when its server fails, as a ZooKeeper client does.
func startLin(t *testing.T, e *zkserver.Ensemble, keys []string, n int) *linRun {
	t.Helper()
	setup := dial(t, e.Addrs(), 4*time.Second)
	for _, k := range keys {
		if _, err := setup.Create(k, []byte("init"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	r := &linRun{h: &linHistory{base: time.Now()}, stop: make(chan struct{})}
	all := e.Addrs()
	for i := range n {
		addrs := append(append([]string(nil), all[i%len(all):]...), all[:i%len(all)]...)
		c := dial(t, addrs, 3*time.Second)
		r.conns = append(r.conns, c)
		r.wg.Add(1)
		go func() { defer r.wg.Done(); linClient(r.h, i, c, keys, r.stop) }()
	}
	return r
}

// finish stops the clients (a call still pending ends with an unknown
// outcome) and checks the history.
func (r *linRun) finish(t *testing.T, name string) {
	t.Helper()
	close(r.stop)
	for _, c := range r.conns {
		c.Close()
	}
	r.wg.Wait()
	r.h.check(t, name)
}
