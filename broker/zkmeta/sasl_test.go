package zkmeta

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/zkproto"
)

// fakeZooKeeper answers one connection as ZooKeeper 3.8 does with SASL:
// a ConnectResponse, then each sasl request with its DIGEST-MD5 token
// (AUTHFAILED for a failed one); it returns the user it authenticated.
func fakeZooKeeper(t *testing.T, nc net.Conn, users map[string]string) <-chan string {
	done := make(chan string, 1)
	go func() {
		defer close(done)
		if _, err := readFrame(nc); err != nil { // the ConnectRequest
			return
		}
		resp := zkproto.ConnectResponse{TimeOut: 6000, SessionID: 42, Passwd: make([]byte, 16)}
		nc.Write(zkproto.AppendFrame(nil, &resp))
		srv := &digestmd5.Server{Service: "zookeeper", Host: "zk-sasl-md5", Password: func(u string) (string, bool) { p, ok := users[u]; return p, ok }}
		for !srv.Complete() {
			frame, err := readFrame(nc)
			if err != nil {
				return
			}
			r := zkproto.NewReader(frame)
			var hdr zkproto.RequestHeader
			hdr.Decode(r)
			var req zkproto.GetSASLRequest
			req.Decode(r)
			if hdr.Type != zkproto.OpSASL || req.Token == nil {
				t.Errorf("request %v with token %v, want a sasl request with a token", hdr.Type, req.Token)
				return
			}
			token, err := srv.Next(req.Token)
			reply := zkproto.ReplyHeader{Xid: hdr.Xid}
			if err != nil {
				reply.Err = zkproto.ErrAuthFailed
			}
			nc.Write(zkproto.AppendReply(nil, reply, &zkproto.SetSASLResponse{Token: token}))
			if err != nil {
				return
			}
		}
		done <- srv.User()
	}()
	return done
}

// TestSASLConn: the wrapper runs the exchange before go-zookeeper reads
// the ConnectResponse, which it then gets whole; a wrong password fails
// the read with ErrSASLAuthFailed and tells the Client.
func TestSASLConn(t *testing.T) {
	for _, tc := range []struct {
		pass string
		ok   bool
	}{{"kafka-secret", true}, {"guess", false}} {
		client, server := net.Pipe()
		done := fakeZooKeeper(t, server, map[string]string{"kafka": "kafka-secret"})
		var told error
		c := &saslConn{Conn: client, creds: &SASLCredentials{User: "kafka", Password: tc.pass, Service: "zookeeper"}, failed: func(err error) { told = err }}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.Write(zkproto.AppendFrame(nil, &zkproto.ConnectRequest{TimeOut: 6000, Passwd: make([]byte, 16)}))
		var size [4]byte
		_, err := io.ReadFull(c, size[:])
		if !tc.ok {
			if !errors.Is(err, ErrSASLAuthFailed) || !errors.Is(told, ErrSASLAuthFailed) {
				t.Fatalf("wrong password: read %v, told %v", err, told)
			}
			client.Close()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, body); err != nil {
			t.Fatal(err)
		}
		var resp zkproto.ConnectResponse
		resp.Decode(zkproto.NewReader(body))
		if resp.SessionID != 42 {
			t.Fatalf("go-zookeeper would get session %d", resp.SessionID)
		}
		if user := <-done; user != "kafka" {
			t.Fatalf("the server authenticated %q", user)
		}
		client.Close()
	}
}

// TestSecureACL: Kafka's ZkData.defaultAcls with zookeeper.set.acl.
func TestSecureACL(t *testing.T) {
	creatorRead := append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
	for path, want := range map[string][]zk.ACL{
		"/brokers/ids/0": creatorRead, "/consumers/g/offsets": creatorRead, "/config/topics/t": creatorRead,
		"/consumers": OpenACL, "/config/users": zk.AuthACL(zk.PermAll), "/config/users/alice": zk.AuthACL(zk.PermAll),
		"/config/brokers/1": zk.AuthACL(zk.PermAll), "/config/usersx": creatorRead,
	} {
		got := secureACL(path)
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", path, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v, want %v", path, got, want)
			}
		}
	}
	z := &Client{}
	if acl := z.ACL("/brokers/ids/0"); len(acl) != 1 || acl[0] != OpenACL[0] {
		t.Errorf("without zookeeper.set.acl: %v", acl)
	}
}
