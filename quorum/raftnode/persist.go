package raftnode

import (
	"errors"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// A Ready's write and fsync overlap the apply of the committed entries
// that earlier Readys made durable (ZooKeeper's pipeline: the next batch
// is written while the previous one is applied and answered). The loop
// hands rd to the persister goroutine, applies the durable entries
// itself, then waits for the fsync; it sends rd's messages and applies
// rd's own entries only after that, so nothing is acknowledged before it
// is durable. Only normal entries are applied meanwhile: a conf change
// steps raft, which reads the storage the persister is writing.
type persister struct {
	req  chan *raft.Ready
	done chan error
}

func newPersister(st *storage) *persister {
	p := &persister{req: make(chan *raft.Ready), done: make(chan error, 1)}
	go func() {
		for rd := range p.req {
			p.done <- st.save(rd)
		}
	}()
	return p
}

// stop ends the goroutine; no save is running (saveApplying waits for it).
func (p *persister) stop() { close(p.req) }

// saveApplying saves rd and applies early (committed entries already
// durable), at the same time when it may.
func (n *Node) saveApplying(rd *raft.Ready, early []*raftpb.Entry) error {
	if len(early) == 0 || !allNormal(early) || !needsWrite(rd) {
		if err := n.apply(early); err != nil {
			return err
		}
		return n.st.save(rd)
	}
	n.persist.req <- rd
	aerr := n.apply(early)
	return errors.Join(<-n.persist.done, aerr)
}

func allNormal(ents []*raftpb.Entry) bool {
	for _, e := range ents {
		if e.GetType() != raftpb.EntryNormal {
			return false
		}
	}
	return true
}

// needsWrite reports whether save has disk work to do for rd (a snapshot
// is never saved while applying: durablePrefix holds none back then).
func needsWrite(rd *raft.Ready) bool { return len(rd.Entries) > 0 || rd.MustSync }
