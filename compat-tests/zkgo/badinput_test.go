package zkgo

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum"
	"github.com/zkafka/zkafka/zkproto"
)

func TestUnknownOpcodeGetsUnimplementedThenClose(t *testing.T) {
	ts := startServer(t)
	bystander, _ := ts.connect(5 * time.Second)
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: 999}, &zkproto.Empty{}))
	frame, err := rc.readFrame()
	if err != nil {
		t.Fatal(err)
	}
	var h zkproto.ReplyHeader
	h.Decode(zkproto.NewReader(frame))
	if h.Err != zkproto.ErrUnimplemented || !rc.closed() {
		t.Fatalf("unknown opcode: %v", h.Err)
	}
	if _, _, err := bystander.Get("/"); err != nil {
		t.Fatalf("other sessions must keep working: %v", err)
	}
}

func TestOversizedAndTruncatedFramesClose(t *testing.T) {
	ts := startServer(t)
	bystander, _ := ts.connect(5 * time.Second)
	for name, payload := range map[string][]byte{
		"oversized":       binary.BigEndian.AppendUint32(nil, 0xfffff+1),
		"negative length": binary.BigEndian.AppendUint32(nil, 0xffffffff),
		"header only":     {0, 0, 0, 2, 0, 1}, // a whole 2-byte frame: the request header is cut short
	} {
		rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
		rc.write(payload)
		if !rc.closed() {
			t.Errorf("%s: connection not closed", name)
		}
	}
	garbage, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	garbage.Write([]byte{0, 0, 0, 3, 1, 2, 3})
	garbage.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := garbage.Read(make([]byte, 1)); err == nil {
		t.Error("a malformed connect request was answered")
	}
	garbage.Close()
	if _, _, err := bystander.Get("/"); err != nil {
		t.Fatalf("other sessions must keep working: %v", err)
	}
}

func TestBadPaths(t *testing.T) {
	ts := startServer(t)
	rc := dialRaw(t, ts.addr, zkproto.ConnectRequest{})
	rc.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/ok", ACL: zkproto.OpenACLUnsafe})
	for _, tc := range []struct {
		path string
		want zkproto.Err
	}{
		{"/ok/", zkproto.ErrBadArguments},
		{"/ok//x", zkproto.ErrNoNode}, // the parent "/ok/" is missing: NoNode comes first
		{"relative", zkproto.ErrBadArguments},
		{"/ok/.", zkproto.ErrBadArguments},
		{"/missing/x/", zkproto.ErrNoNode},
	} {
		h, _, _ := rc.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: tc.path, ACL: zkproto.OpenACLUnsafe})
		if h.Err != tc.want {
			t.Errorf("create %q: %v, want %v", tc.path, h.Err, tc.want)
		}
	}
}

func fourLetter(t *testing.T, addr, word string) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(nc, word)
	b, err := io.ReadAll(bufio.NewReader(nc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFourLetterWords(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	c.ExistsW("/watched")
	if got := fourLetter(t, ts.addr, "ruok"); got != "imok" {
		t.Fatalf("ruok: %q", got)
	}
	srvr := fourLetter(t, ts.addr, "srvr")
	for _, want := range []string{"Zookeeper version: 3.8", "Mode: standalone", "Node count: ", "Zxid: 0x"} {
		if !strings.Contains(srvr, want) {
			t.Errorf("srvr lacks %q:\n%s", want, srvr)
		}
	}
	mntr := fourLetter(t, ts.addr, "mntr")
	for _, want := range []string{"zk_server_state\tstandalone", "zk_znode_count\t", "zk_watch_count\t1", "zk_num_alive_connections\t"} {
		if !strings.Contains(mntr, want) {
			t.Errorf("mntr lacks %q:\n%s", want, mntr)
		}
	}
	if got := fourLetter(t, ts.addr, "wchs"); !strings.HasPrefix(got, "1 connections watching 1 paths") {
		t.Errorf("wchs: %q", got)
	}
	if got := fourLetter(t, ts.addr, "isro"); got != "rw" {
		t.Errorf("isro: %q", got)
	}
	for _, w := range []string{"stat", "conf", "cons", "envi", "dirs", "wchc", "wchp", "dump", "srst", "crst"} {
		if got := fourLetter(t, ts.addr, w); got == "" || strings.Contains(got, "not executed") {
			t.Errorf("%s: %q", w, got)
		}
	}
}

func TestFourLetterWhitelist(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) { c.FourLetterWords = map[string]bool{"srvr": true} })
	if got := fourLetter(t, ts.addr, "ruok"); got != "ruok is not executed because it is not in the whitelist.\n" {
		t.Fatalf("ruok outside the whitelist: %q", got)
	}
}
