//go:build compat

package zksasl

import (
	"bufio"
	"fmt"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/zkproto"
)

// wireClient speaks the ZooKeeper protocol over TCP one request at a time
// and keeps the raw replies.
type wireClient struct {
	t   *testing.T
	nc  net.Conn
	br  *bufio.Reader
	xid int32
}

func dialWire(t *testing.T, addr string) *wireClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &wireClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	req := zkproto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	if _, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

// sasl sends one token and returns the reply frame as it came, and the
// token in it ("closed" when the server closed the connection instead).
func (c *wireClient) sasl(tok []byte) (string, []byte) {
	c.xid++
	c.nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: c.xid, Type: zkproto.OpSASL}, &zkproto.GetSASLRequest{Token: tok}))
	frame, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		return "closed", nil
	}
	r := zkproto.NewReader(frame)
	var h zkproto.ReplyHeader
	h.Decode(r)
	var resp zkproto.SetSASLResponse
	resp.Decode(r)
	return fmt.Sprintf("%x", frame), resp.Token
}

// afterClose reports what comes after a reply: "closed" or "open" (the
// wait is well within the session timeout of 10 s, past which the server
// closes an idle connection anyway).
func (c *wireClient) afterClose() string {
	c.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.br.ReadByte(); err != nil {
		return "closed"
	}
	return "open"
}

var nonceDirective = regexp.MustCompile(`nonce="[^"]+"`)

// wireTranscript runs the exchanges whose bytes are compared.
func wireTranscript(t *testing.T, addr string) []string {
	var out []string
	// A good exchange: the challenge (nonce masked) and the shape of rspauth.
	c := dialWire(t, addr)
	frame, challenge := c.sasl([]byte{})
	out = append(out, "challenge frame length "+fmt.Sprint(len(frame)/2), "challenge "+nonceDirective.ReplaceAllString(string(challenge), `nonce="N"`))
	dc := &digestmd5.Client{User: "alice", Password: "alice-secret", Service: "zookeeper", Host: "zk-sasl-md5"}
	resp, err := dc.Respond(challenge)
	if err != nil {
		t.Fatal(err)
	}
	frame, final := c.sasl(resp)
	out = append(out, "final frame length "+fmt.Sprint(len(frame)/2), fmt.Sprintf("rspauth verifies: %v", dc.Verify(final) == nil))
	// A token after completion.
	frame, _ = c.sasl([]byte{})
	out = append(out, "token after completion "+frame, "then "+c.afterClose())
	// A wrong password: the whole frame, then the close.
	c = dialWire(t, addr)
	_, challenge = c.sasl([]byte{})
	dc.Password = "wrong"
	resp, _ = dc.Respond(challenge)
	frame, _ = c.sasl(resp)
	out = append(out, "wrong password "+frame, "then "+c.afterClose())
	// Garbage, and a response past 4096 bytes, for the response.
	for _, bad := range [][]byte{[]byte("garbage"), make([]byte, 5000)} {
		c = dialWire(t, addr)
		c.sasl([]byte{})
		frame, _ = c.sasl(bad)
		out = append(out, fmt.Sprintf("%d bad bytes %s", len(bad), frame), "then "+c.afterClose())
	}
	// A first token that is not empty: ignored.
	c = dialWire(t, addr)
	frame, challenge = c.sasl([]byte("x"))
	out = append(out, "initial response: frame length "+fmt.Sprint(len(frame)/2), "challenge "+nonceDirective.ReplaceAllString(string(challenge), `nonce="N"`), "then "+c.afterClose())
	return out
}

// TestSASLWireBytes compares the bytes of the sasl replies of Apache
// ZooKeeper and zkafka: the challenge (but its nonce), the length of the
// final reply, and the whole frames of the failures.
func TestSASLWireBytes(t *testing.T) {
	jaas := writeFile(t, "server.jaas", serverJAAS)
	got := map[string][]string{}
	for _, sv := range servers[:2] {
		s := startSASL(t, sv, jaas)
		got[sv.name] = wireTranscript(t, s.Addr())
	}
	t.Logf("Apache ZooKeeper: %q", got["apache"])
	if fmt.Sprint(got["apache"]) != fmt.Sprint(got["zkafka"]) {
		t.Fatalf("the sasl replies differ:\nzkafka %q\nApache %q", got["zkafka"], got["apache"])
	}
}

// TestSASLWithoutJAAS: a server without a JAAS file answers a sasl
// request as Apache ZooKeeper does.
func TestSASLWithoutJAAS(t *testing.T) {
	got := map[string]string{}
	for _, sv := range servers[:2] {
		s := sv.start(t, zkserver.Options{ExtraConfig: []string{saslProvider}, FourLetterWords: []string{"srvr", "ruok"}})
		c := dialWire(t, s.Addr())
		frame, _ := c.sasl([]byte{})
		got[sv.name] = frame
	}
	t.Logf("Apache ZooKeeper: %s", got["apache"])
	if got["apache"] != got["zkafka"] {
		t.Fatalf("zkafka %s, Apache ZooKeeper %s", got["zkafka"], got["apache"])
	}
}
