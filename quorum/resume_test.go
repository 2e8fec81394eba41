package quorum

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// losingRevalidations is an intercept of the log as a follower sees it
// around a leader's death: the first n revalidations fail with
// raftnode.ErrOutcomeUnknown (forwarded to a leader that died); every other
// proposal applies at once.
func losingRevalidations(n int) func(znode.Txn) verdict {
	return func(txn znode.Txn) verdict {
		if txn.Ops[0].Type == znode.OpRevalidateSession && n > 0 {
			n--
			return loseOutcome
		}
		return applyNow
	}
}

// startFollower serves an ensemble member that knows a leader (server 2)
// over log, on 127.0.0.1:0, with a 200 ms tickTime.
func startFollower(t *testing.T, log *instantLog) *Server {
	t.Helper()
	s := newServerOver(t, 200*time.Millisecond, log)
	s.cfg.MyID = 1
	s.ens = &ensemble{kick: make(chan struct{}, 1)}
	s.ens.mu.touches = map[int64]time.Duration{}
	s.ens.leader.Store(2)
	s.ens.role.Store(uint32(raftnode.RoleFollower))
	return serveOn(t, s)
}

// createSessionIn applies a session of timeout ms to s's tree directly.
func createSessionIn(s *Server, log *instantLog, timeout int32) int64 {
	id := s.ids.nextID()
	txn := znode.Txn{Session: id, Owner: 2, Ops: []znode.Op{{Type: zkproto.OpCreateSession, SessionTimeout: timeout}}}
	<-log.ProposeAsync(txn.Append(nil))
	return id
}

// errNoAnswer is rawResume's error when the server closed the connection
// without a ConnectResponse.
var errNoAnswer = errors.New("closed without an answer")

// rawResume asks s for session id (with its right password) and returns
// the ConnectResponse, or errNoAnswer.
func rawResume(t *testing.T, s *Server, id int64) (zkproto.ConnectResponse, error) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(15 * time.Second))
	req := zkproto.ConnectRequest{TimeOut: 2000, SessionID: id, Passwd: sessionPassword(id)}
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	frame, err := zkproto.ReadFrame(bufio.NewReader(nc), nil, 1<<20)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return zkproto.ConnectResponse{}, errNoAnswer
	}
	if err != nil {
		t.Fatalf("connect response: %v", err)
	}
	var resp zkproto.ConnectResponse
	resp.Decode(zkproto.NewReader(frame))
	return resp, nil
}

// TestResumeRetriesALostRevalidation: a follower whose revalidation was
// forwarded to a leader that died (outcome unknown) proposes it again, and
// the client keeps its session.
func TestResumeRetriesALostRevalidation(t *testing.T) {
	log := &instantLog{intercept: losingRevalidations(3)}
	s := startFollower(t, log)
	id := createSessionIn(s, log, 2000)
	resp, err := rawResume(t, s, id)
	if err != nil || resp.SessionID != id || resp.TimeOut != 2000 {
		t.Fatalf("resume: %+v, %v; want session 0x%x with timeout 2000", resp, err, id)
	}
}

// TestResumeWithoutOutcomeIsNotExpired: when the revalidation never gets
// an outcome, the follower closes without an answer (the client tries the
// next server) instead of answering "expired" for a live session.
func TestResumeWithoutOutcomeIsNotExpired(t *testing.T) {
	log := &instantLog{intercept: losingRevalidations(1 << 30)}
	s := startFollower(t, log)
	id := createSessionIn(s, log, 2000)
	if resp, err := rawResume(t, s, id); err != errNoAnswer {
		t.Fatalf("resume without an outcome: %+v, %v; want the connection closed without an answer", resp, err)
	}
}

// TestResumeOfAClosedSessionIsExpired: a session the caught-up tree does
// not hold is answered "expired" (session id 0, timeout 0).
func TestResumeOfAClosedSessionIsExpired(t *testing.T) {
	log := &instantLog{}
	s := startFollower(t, log)
	id := createSessionIn(s, log, 2000)
	closeTxn := znode.Txn{Session: id, Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
	<-log.ProposeAsync(closeTxn.Append(nil))
	resp, err := rawResume(t, s, id)
	if err != nil || resp.SessionID != 0 || resp.TimeOut != 0 {
		t.Fatalf("resume of a closed session: %+v, %v; want session 0, timeout 0", resp, err)
	}
}

// TestResumeOnALaggingServerWithoutLeader: a session this server's tree
// does not hold may be one it has not caught up with; without a leader to
// catch up from, the server closes without an answer.
func TestResumeOnALaggingServerWithoutLeader(t *testing.T) {
	log := &instantLog{readIndex: waitForLeader}
	s := startFollower(t, log)
	id := s.ids.nextID() // created elsewhere, not applied here yet
	if resp, err := rawResume(t, s, id); err != errNoAnswer {
		t.Fatalf("resume on a lagging server: %+v, %v; want the connection closed without an answer", resp, err)
	}
}
