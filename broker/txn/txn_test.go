package txn

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/zkafka/zkafka/kproto"
)

// The scripts in testdata drive one transactional id through the state
// machine. Commands:
//
//	new pid=N [timeout=MS]               the id is unknown: a Txn with producer id N
//	init [timeout=MS] [pid=N epoch=E]    InitProducerId (KIP-360 fields when given)
//	add pid=N epoch=E parts=t-0,t-1      AddPartitionsToTxn
//	verify pid=N epoch=E parts=t-0       AddPartitionsToTxn verify_only
//	end pid=N epoch=E commit|abort       EndTxn
//	markers-done                         every marker written
//	ack | fail                           the pending write acknowledged / failed
//	tick ms=N                            advance the clock by N and run the timer
//	set-epoch E                          force the epoch (the exhausted case)
//	reload                               encode and decode the current record (failover)
//
// Each prints the step (code, the write, markers) and then the state.
type env struct {
	t      *Txn
	now    int64
	nextID int64
	cfg    Config
}

func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		e := &env{now: 1000, nextID: 5000, cfg: Config{MaxTimeoutMs: 900000, ExpirationMs: 604800000}}
		datadriven.RunTest(t, path, e.handle)
	})
}

func intArg(d *datadriven.TestData, key string, def int64) int64 {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			n, _ := strconv.ParseInt(a.Vals[0], 10, 64)
			return n
		}
	}
	return def
}

func partsArg(d *datadriven.TestData) []TopicPartition {
	var out []TopicPartition
	for _, a := range d.CmdArgs {
		if a.Key != "parts" {
			continue
		}
		for _, v := range strings.Split(strings.Join(a.Vals, ","), ",") {
			i := strings.LastIndexByte(v, '-')
			p, _ := strconv.Atoi(v[i+1:])
			out = append(out, TopicPartition{v[:i], int32(p)})
		}
	}
	return out
}

func (e *env) handle(t *testing.T, d *datadriven.TestData) string {
	var st Step
	pid, epoch := intArg(d, "pid", -1), int16(intArg(d, "epoch", -1))
	switch d.Cmd {
	case "new":
		e.t = New("tid", pid, int32(intArg(d, "timeout", 60000)), e.now)
		return e.show()
	case "init":
		timeout := int32(intArg(d, "timeout", 60000))
		if !e.cfg.ValidTimeout(timeout) {
			return "INVALID_TRANSACTION_TIMEOUT\n"
		}
		st = e.t.InitProducerID(timeout, pid, epoch, e.now, func() (int64, error) { e.nextID++; return e.nextID, nil })
	case "add":
		st = e.t.AddPartitions(pid, epoch, partsArg(d), e.now)
	case "verify":
		code, each := e.t.Verify(pid, epoch, partsArg(d))
		return fmt.Sprintf("%s %v\n", name(code), names(each))
	case "end":
		st = e.t.EndTxn(pid, epoch, d.HasArg("commit"), e.now)
	case "markers-done":
		st = e.t.MarkersDone(e.now)
	case "ack":
		e.t.Apply()
		return e.show()
	case "fail":
		e.t.Abandon()
		return e.show()
	case "tick":
		e.now += intArg(d, "ms", 0)
		st = e.t.Tick(e.cfg, e.now)
	case "set-epoch":
		n, _ := strconv.Atoi(d.CmdArgs[0].Key)
		e.t.Cur.ProducerEpoch = int16(n)
		return e.show()
	case "reload":
		id, m, err := Decode(EncodeKey(e.t.ID), EncodeValue(e.t.Cur))
		if err != nil {
			return err.Error() + "\n"
		}
		if m == nil {
			return "tombstone for " + id + "\n"
		}
		e.t = &Txn{ID: id, Cur: *m}
		return e.show()
	default:
		t.Fatalf("unknown command %s", d.Cmd)
	}
	out := name(st.Code)
	if st.Write != nil {
		out += " write=" + st.Write.State.String()
	}
	if st.Markers {
		out += " markers"
	}
	return out + "\n" + e.show()
}

func (e *env) show() string {
	m := e.t.Cur
	s := fmt.Sprintf("%s pid=%d epoch=%d last=%d/%d timeout=%d", m.State, m.ProducerID, m.ProducerEpoch, m.LastProducerID, m.LastProducerEpoch, m.TimeoutMs)
	if len(m.Partitions) > 0 {
		s += fmt.Sprintf(" parts=%v", m.Partitions)
	}
	if e.t.Pending != nil {
		s += fmt.Sprintf(" pending=%s/%d", e.t.Pending.State, e.t.Pending.ProducerEpoch)
	}
	return s + "\n"
}

func name(c kproto.ErrorCode) string {
	if c == CodeProducerFenced {
		return "PRODUCER_FENCED"
	}
	return c.String()
}

func names(cs []kproto.ErrorCode) []string {
	var out []string
	for _, c := range cs {
		out = append(out, name(c))
	}
	return out
}
