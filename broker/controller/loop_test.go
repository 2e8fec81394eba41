package controller

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestController runs the scripts in testdata: a Controller whose loop is
// stepped by the test (no goroutine, no clock) over a recording
// ZooKeeper. Each command prints what the controller did: its ZooKeeper
// writes, the partitions it notified, its elections and resignations.
// Rewrite the expected output with -rewrite. The commands:
//
//	brokers 1=E1 2=E2 ...        /brokers/ids now holds these brokers (id=epoch); the watch fires
//	topic name=T p0=1,2,3 ...    /brokers/topics/T is created with these assignments; the watch fires
//	unclean topic=T              the topic's unclean.leader.election.enable becomes true
//	elect                        run for controller (another holds it after "taken")
//	taken                        another broker holds /controller
//	vacate                       /controller is gone (its holder's session ended)
//	fence                        another controller bumps /controller_epoch
//	casfail topic=T p=N [isr=..] another writer changes T-N's state znode (a later CAS fails), setting its ISR
//	shutdown broker=N epoch=E    broker N (epoch E) asks for a controlled shutdown; prints the answer
//	delete name=T                topic T's znodes are deleted; the /brokers/topics watch fires
//	state                        every partition state znode
//	alter broker=B [epoch=E] topic=T p=N leader_epoch=L isr=1,2 version=V (epoch: B's registration's by default)
//	                             broker B's AlterPartition for T-N; prints the answer
func TestController(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		env := newLoopEnv()
		datadriven.RunTest(t, path, env.handle)
	})
}

type fakeState struct {
	s       LeaderAndISR
	version int32
}

// recordingStore is a Store over an in-memory ZooKeeper that records
// every write.
type recordingStore struct {
	out            *strings.Builder
	brokers        map[int32]int64
	topics         map[string][][]int32
	unclean        map[string]bool
	states         map[PartitionID]*fakeState
	moves          map[PartitionID][2][]int32
	epoch          int32
	epochVersion   int32
	controllerHeld bool
}

func (s *recordingStore) Elect() (int32, int32, error) {
	if s.controllerHeld {
		return 0, 0, ErrNotElected
	}
	s.controllerHeld = true
	s.epoch++
	s.epochVersion++
	fmt.Fprintf(s.out, "zk: multi create /controller, set /controller_epoch=%d (version %d)\n", s.epoch, s.epochVersion)
	return s.epoch, s.epochVersion, nil
}

func (s *recordingStore) Brokers() (map[int32]BrokerInfo, error) {
	out := map[int32]BrokerInfo{}
	for id, e := range s.brokers {
		out[id] = BrokerInfo{Epoch: e, Endpoints: []Endpoint{{Listener: "INTERNAL", Protocol: "PLAINTEXT", Host: "b" + strconv.Itoa(int(id)), Port: 9092}}}
	}
	return out, nil
}

func (s *recordingStore) Topics(names []string) ([]TopicRead, error) {
	if names == nil {
		for n := range s.topics {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var out []TopicRead
	for _, n := range names {
		as, ok := s.topics[n]
		if !ok {
			out = append(out, TopicRead{Topic: n, Deleted: true})
			continue
		}
		tr := TopicRead{Topic: n, Unclean: s.unclean[n]}
		for p, r := range as {
			pr := PartitionRead{Replicas: slices.Clone(r)}
			if m, ok := s.moves[PartitionID{n, int32(p)}]; ok {
				pr.Adding, pr.Removing = m[0], m[1]
			}
			if st := s.states[PartitionID{n, int32(p)}]; st != nil {
				pr.HasState, pr.State, pr.ZkVersion = true, st.s, st.version
				pr.State.ISR = slices.Clone(st.s.ISR)
			}
			tr.Partitions = append(tr.Partitions, pr)
		}
		out = append(out, tr)
	}
	return out, nil
}

func (s *recordingStore) DeleteTopic(epochZkVersion int32, name string) error {
	fmt.Fprintf(s.out, "zk: check /controller_epoch version %d, delete topic %s\n", epochZkVersion, name)
	delete(s.topics, name)
	for id := range s.states {
		if id.Topic == name {
			delete(s.states, id)
		}
	}
	return nil
}

func (s *recordingStore) ReassignmentsDone(epochZkVersion int32, ids []PartitionID) error {
	var names []string
	for _, id := range ids {
		names = append(names, fmt.Sprintf("%s-%d", id.Topic, id.Partition))
	}
	fmt.Fprintf(s.out, "zk: reassignments done [%s]\n", strings.Join(names, " "))
	return nil
}

func (s *recordingStore) Write(epochZkVersion int32, ws []StateWrite, ts []TopicWrite) ([]int32, error) {
	var ops []string
	ops = append(ops, fmt.Sprintf("check /controller_epoch version %d", epochZkVersion))
	for _, t := range ts {
		line := fmt.Sprintf("set topic %s", t.Topic)
		for p, r := range t.Replicas {
			line += fmt.Sprintf(" p%d=%v", p, r)
			if a := t.Adding[int32(p)]; a != nil {
				line += fmt.Sprintf(" adding=%v", a)
			}
			if a := t.Removing[int32(p)]; a != nil {
				line += fmt.Sprintf(" removing=%v", a)
			}
		}
		ops = append(ops, line)
	}
	fail := error(nil)
	if epochZkVersion != s.epochVersion {
		fail = ErrFenced
	}
	for _, w := range ws {
		cur := s.states[w.Partition]
		verb := "set"
		if w.ZkVersion < 0 {
			verb = "create"
		}
		ops = append(ops, fmt.Sprintf("%s %s-%d %s (version %d)", verb, w.Partition.Topic, w.Partition.Partition, fmtState(w.State, true), w.ZkVersion))
		if fail == nil && (w.ZkVersion < 0) != (cur == nil) || cur != nil && cur.version != w.ZkVersion {
			if fail == nil {
				fail = zk.ErrBadVersion
			}
		}
	}
	fmt.Fprintf(s.out, "zk: multi\n  %s\n", strings.Join(ops, "\n  "))
	if fail != nil {
		fmt.Fprintf(s.out, "zk: multi failed: %v\n", fail)
		return nil, fail
	}
	for _, t := range ts {
		s.topics[t.Topic] = t.Replicas
		for p := range t.Replicas {
			id := PartitionID{t.Topic, int32(p)}
			s.moves[id] = [2][]int32{t.Adding[int32(p)], t.Removing[int32(p)]}
		}
	}
	versions := make([]int32, len(ws))
	for i, w := range ws {
		st := s.states[w.Partition]
		if st == nil {
			st = &fakeState{version: -1}
			s.states[w.Partition] = st
		}
		st.version++
		st.s = w.State
		versions[i] = st.version
	}
	return versions, nil
}

type loopEnv struct {
	out   strings.Builder
	store *recordingStore
	c     *Controller
}

func newLoopEnv() *loopEnv {
	e := &loopEnv{}
	e.store = &recordingStore{out: &e.out, brokers: map[int32]int64{}, topics: map[string][][]int32{},
		unclean: map[string]bool{}, states: map[PartitionID]*fakeState{}, moves: map[PartitionID][2][]int32{}}
	onChange := func(active bool, epoch, version int32) {
		if active {
			fmt.Fprintf(&e.out, "controller: active epoch=%d epoch_zk_version=%d\n", epoch, version)
		} else {
			fmt.Fprintf(&e.out, "controller: resigned\n")
		}
	}
	e.c = New(Config{ISRIsLive: true, BrokerID: 1, Listener: "INTERNAL", ImbalancePercentage: 10}, e.store, &recordingChannels{out: &e.out}, onChange,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return e
}

// drain runs every queued request through the loop's step, as Run would.
func (e *loopEnv) drain() {
	for {
		select {
		case r := <-e.c.events:
			e.c.handle(r)
		default:
			return
		}
	}
}

func (e *loopEnv) handle(t *testing.T, d *datadriven.TestData) string {
	e.out.Reset()
	// The requests that wait for the loop are submitted from another
	// goroutine, and the test is the loop.
	never := make(chan struct{})
	submitted := make(chan struct{})
	async := func(f func()) {
		go func() { f(); close(submitted) }()
		r := <-e.c.events
		e.c.handle(r)
		<-submitted
	}
	switch d.Cmd {
	case "brokers":
		e.store.brokers = map[int32]int64{}
		for _, a := range d.CmdArgs {
			id, _ := strconv.Atoi(a.Key)
			ep, _ := strconv.Atoi(a.Vals[0])
			e.store.brokers[int32(id)] = int64(ep)
		}
		e.c.BrokersChanged(never)
	case "topic":
		var name string
		d.ScanArgs(t, "name", &name)
		var as [][]int32
		for _, a := range d.CmdArgs {
			if !strings.HasPrefix(a.Key, "p") {
				continue
			}
			var ids []int32
			for _, s := range strings.Split(strings.Join(a.Vals, ","), ",") {
				n, _ := strconv.Atoi(s)
				ids = append(ids, int32(n))
			}
			as = append(as, ids)
		}
		e.store.topics[name] = as
		async(func() { e.c.TopicsChanged(never, []string{name}) })
	case "unclean":
		var name string
		d.ScanArgs(t, "topic", &name)
		e.store.unclean[name] = true
		async(func() { e.c.TopicsChanged(never, []string{name}) })
	case "elect":
		async(func() { e.c.TryElect(never) })
	case "shutdown":
		var id int
		var epoch int64
		d.ScanArgs(t, "broker", &id)
		d.ScanArgs(t, "epoch", &epoch)
		async(func() {
			remaining, err := e.c.ControlledShutdown(never, int32(id), epoch)
			var names []string
			for _, p := range remaining {
				names = append(names, p.Topic+"-"+strconv.Itoa(int(p.Partition)))
			}
			fmt.Fprintf(&e.out, "answer: remaining [%s] err=%v\n", strings.Join(names, " "), err)
		})
	case "delete":
		var name string
		d.ScanArgs(t, "name", &name)
		delete(e.store.topics, name)
		for id := range e.store.states {
			if id.Topic == name {
				delete(e.store.states, id)
			}
		}
		async(func() { e.c.TopicsChanged(never, nil) })
	case "taken":
		e.store.controllerHeld = true
	case "vacate":
		e.store.controllerHeld = false
	case "fence":
		e.store.epoch++
		e.store.epochVersion++
	case "casfail":
		var name string
		var p int
		d.ScanArgs(t, "topic", &name)
		d.ScanArgs(t, "p", &p)
		st := e.store.states[PartitionID{name, int32(p)}]
		st.version++
		if d.HasArg("isr") {
			var isr string
			d.ScanArgs(t, "isr", &isr)
			st.s.ISR = nil
			for _, s := range strings.Split(isr, ",") {
				n, _ := strconv.Atoi(s)
				st.s.ISR = append(st.s.ISR, int32(n))
			}
		}
	case "alter":
		var broker, p, le, version int
		var name, isr string
		d.ScanArgs(t, "broker", &broker)
		epoch := -1 // an unknown broker's
		if e, ok := e.store.brokers[int32(broker)]; ok {
			epoch = int(e) // its registration's, as a leader sends it
		}
		if d.HasArg("epoch") {
			d.ScanArgs(t, "epoch", &epoch)
		}
		d.ScanArgs(t, "topic", &name)
		d.ScanArgs(t, "p", &p)
		d.ScanArgs(t, "leader_epoch", &le)
		d.ScanArgs(t, "isr", &isr)
		d.ScanArgs(t, "version", &version)
		var ids []int32
		for _, s := range strings.Split(isr, ",") {
			n, _ := strconv.Atoi(s)
			ids = append(ids, int32(n))
		}
		req := AlterRequest{Broker: int32(broker), BrokerEpoch: int64(epoch), Partitions: []AlterISR{{
			Partition: PartitionID{name, int32(p)}, LeaderEpoch: int32(le), ISR: ids, PartitionEpoch: int32(version)}}}
		var resp AlterResponse
		async(func() { resp = e.c.AlterPartition(never, req) })
		fmt.Fprintf(&e.out, "answer: error=%d\n", resp.Error)
		for _, r := range resp.Results {
			if r.Error != CodeNone {
				fmt.Fprintf(&e.out, "  %s-%d error=%d\n", r.Partition.Topic, r.Partition.Partition, r.Error)
				continue
			}
			fmt.Fprintf(&e.out, "  %s-%d %s (partition_epoch %d)\n", r.Partition.Topic, r.Partition.Partition, fmtState(r.State, true), r.PartitionEpoch)
		}
	case "electleaders":
		e.electLeaders(t, d, async)
	case "deletetopic":
		var name string
		d.ScanArgs(t, "name", &name)
		e.c.DeleteTopics(never, []string{name})
	case "deleting":
		var name string
		d.ScanArgs(t, "name", &name)
		async(func() {
			e.c.submit(never, true, func() Event {
				brokers, ok := e.c.core.Deleting(name)
				fmt.Fprintf(&e.out, "deleting=%v pending=%v\n", ok, brokers)
				return nil
			})
		})
	case "stopanswer":
		var broker int
		d.ScanArgs(t, "broker", &broker)
		resp := kmsg.NewPtrStopReplicaResponse()
		for _, a := range d.CmdArgs[1:] {
			i := strings.LastIndexByte(a.Key, '-')
			n, _ := strconv.Atoi(a.Key[i+1:])
			rp := kmsg.NewStopReplicaResponsePartition()
			rp.Topic, rp.Partition = a.Key[:i], int32(n)
			if len(a.Vals) > 0 {
				code, _ := strconv.Atoi(a.Vals[0])
				rp.ErrorCode = int16(code)
			}
			resp.Partitions = append(resp.Partitions, rp)
		}
		e.c.Answered(never, int32(broker), resp)
	case "reassign":
		e.reassign(t, d, async)
	case "reassignments":
		var out []Reassignment
		async(func() { out, _ = e.c.ListReassignments(make(chan struct{}), nil) })
		for _, r := range out {
			fmt.Fprintf(&e.out, "%s-%d replicas=%v adding=%v removing=%v\n", r.Partition.Topic, r.Partition.Partition, r.Replicas, r.Adding, r.Removing)
		}
	case "rebalance":
		async(func() {
			e.c.submit(never, true, func() Event { e.c.step(RebalanceCheck{}, false); return nil })
		})
	case "state":
		var ids []PartitionID
		for id := range e.store.states {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool {
			return ids[i].Topic < ids[j].Topic || ids[i].Topic == ids[j].Topic && ids[i].Partition < ids[j].Partition
		})
		for _, id := range ids {
			st := e.store.states[id]
			fmt.Fprintf(&e.out, "%s-%d %s controller_epoch=%d (version %d)\n", id.Topic, id.Partition, fmtState(st.s, true), st.s.ControllerEpoch, st.version)
		}
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	e.drain()
	if e.out.Len() == 0 {
		return "ok\n"
	}
	return e.out.String()
}

// electLeaders runs `electleaders type=preferred|unclean [partitions=t-0,u-1]`
// (no partitions: all) and prints the answers.
func (e *loopEnv) electLeaders(t *testing.T, d *datadriven.TestData, async func(func())) {
	var typ string
	d.ScanArgs(t, "type", &typ)
	req := ElectRequest{Type: ElectPreferred}
	if typ == "unclean" {
		req.Type = ElectUnclean
	}
	if d.HasArg("partitions") {
		var ps string
		d.ScanArgs(t, "partitions", &ps)
		for _, s := range strings.Split(ps, ",") {
			i := strings.LastIndexByte(s, '-')
			n, _ := strconv.Atoi(s[i+1:])
			req.Partitions = append(req.Partitions, PartitionID{s[:i], int32(n)})
		}
	}
	var results []PartitionResult
	var ok bool
	async(func() { results, ok = e.c.ElectLeaders(make(chan struct{}), req) })
	fmt.Fprintf(&e.out, "answer: controller=%v\n", ok)
	for _, r := range results {
		fmt.Fprintf(&e.out, "  %s-%d error=%d %s\n", r.Partition.Topic, r.Partition.Partition, r.Error, r.Message)
	}
}

// reassign runs `reassign t-0=2,3,4 u-1=null ...` and prints the answers.
func (e *loopEnv) reassign(t *testing.T, d *datadriven.TestData, async func(func())) {
	var reqs []Reassign
	for _, a := range d.CmdArgs {
		i := strings.LastIndexByte(a.Key, '-')
		n, _ := strconv.Atoi(a.Key[i+1:])
		r := Reassign{Partition: PartitionID{a.Key[:i], int32(n)}}
		if a.Vals[0] != "null" {
			r.Target = []int32{}
			for _, v := range a.Vals {
				for _, s := range strings.Split(v, ",") {
					id, _ := strconv.Atoi(s)
					r.Target = append(r.Target, int32(id))
				}
			}
		}
		reqs = append(reqs, r)
	}
	var results []PartitionResult
	var ok bool
	async(func() { results, ok = e.c.AlterReassignments(make(chan struct{}), reqs) })
	fmt.Fprintf(&e.out, "answer: controller=%v\n", ok)
	for _, r := range results {
		fmt.Fprintf(&e.out, "  %s-%d error=%d %s\n", r.Partition.Topic, r.Partition.Partition, r.Error, r.Message)
	}
}
