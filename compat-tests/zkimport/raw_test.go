//go:build compat

package zkimport

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// create2 sends a create2 request (opcode 15, which go-zookeeper never
// sends) over a raw connection of its own, so that the server logs a
// create2 txn, and closes the session.
func create2(t *testing.T, addr, path string, data []byte) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	req := zkproto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	if _, err := zkproto.ReadFrame(br, nil, 1<<20); err != nil {
		t.Fatalf("connect: %v", err)
	}
	call := func(xid int32, op zkproto.OpCode, rec zkproto.Record) {
		if _, err := nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: op}, rec)); err != nil {
			t.Fatal(err)
		}
		frame, err := zkproto.ReadFrame(br, nil, 1<<20)
		if err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
		var h zkproto.ReplyHeader
		h.Decode(zkproto.NewReader(frame))
		if h.Err != zkproto.ErrOK {
			t.Fatalf("op %d: %v", op, h.Err)
		}
	}
	call(1, zkproto.OpCreate2, &zkproto.CreateRequest{Path: path, Data: data, ACL: zkproto.OpenACLUnsafe})
	call(2, zkproto.OpCloseSession, &zkproto.Empty{})
}
