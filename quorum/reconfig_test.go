package quorum

import (
	"strings"
	"testing"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/zkproto"
)

func threeMembers(t *testing.T) Config {
	t.Helper()
	c, err := ParseConfig(strings.NewReader("dataDir=/d\nclientPort=2181\n"+
		"server.1=127.0.0.1:2888:3888;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889;127.0.0.1:2182\nserver.3=127.0.0.1:2890:3890;127.0.0.1:2183\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNextMembers: zkCli's reconfig -add, -remove, -members and -from as
// PrepRequestProcessor computes and refuses them, and the text of
// /zookeeper/config after them.
func TestNextMembers(t *testing.T) {
	c := threeMembers(t)
	add45 := "server.4=127.0.0.1:2891:3891:participant;127.0.0.1:2184,server.5=127.0.0.1:2892:3892;2185"
	for _, tc := range []struct {
		name string
		req  zkproto.ReconfigRequest
		want string // the config text at version 0x100000007, or an error
		err  zkproto.Err
	}{
		{"add two", zkproto.ReconfigRequest{JoiningServers: add45, CurConfigID: -1},
			"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
				"server.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183\nserver.4=127.0.0.1:2891:3891:participant;127.0.0.1:2184\n" +
				"server.5=127.0.0.1:2892:3892:participant;0.0.0.0:2185\nversion=100000007", zkproto.ErrOK},
		{"remove one", zkproto.ReconfigRequest{LeavingServers: "3", CurConfigID: 0},
			"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\nversion=100000007", zkproto.ErrOK},
		{"voter to observer", zkproto.ReconfigRequest{JoiningServers: "server.3=127.0.0.1:2890:3890:observer;127.0.0.1:2183", CurConfigID: -1},
			"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
				"server.3=127.0.0.1:2890:3890:observer;127.0.0.1:2183\nversion=100000007", zkproto.ErrOK},
		{"members", zkproto.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;2181,server.2=127.0.0.1:2889:3889;2182", CurConfigID: -1},
			"server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nserver.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\nversion=100000007", zkproto.ErrOK},
		{"stale -from", zkproto.ReconfigRequest{LeavingServers: "3", CurConfigID: 5}, "", zkproto.ErrBadVersion},
		{"joiner without client port", zkproto.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891:3891", CurConfigID: -1}, "", zkproto.ErrBadArguments},
		{"joiner not server.N=spec", zkproto.ReconfigRequest{JoiningServers: "127.0.0.1:2891:3891;2184", CurConfigID: -1}, "", zkproto.ErrBadArguments},
		{"address used twice", zkproto.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2888:3999;2184", CurConfigID: -1}, "", zkproto.ErrBadArguments},
		{"one participant left", zkproto.ReconfigRequest{LeavingServers: "2,3", CurConfigID: -1}, "", zkproto.ErrBadArguments},
		{"bad leaving id", zkproto.ReconfigRequest{LeavingServers: "x", CurConfigID: -1}, "", zkproto.ErrBadArguments},
		{"members with another key", zkproto.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;2181,tickTime=1", CurConfigID: -1}, "", zkproto.ErrBadArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, err := nextMembers(c.Servers, c.ConfigVersion, &tc.req)
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err == zkproto.ErrOK {
				if got := c.configText(next, 0x100000007); got != tc.want {
					t.Fatalf("config\n%s\nwant\n%s", got, tc.want)
				}
			}
		})
	}
}

func TestMembershipChange(t *testing.T) {
	c := threeMembers(t)
	next, _ := nextMembers(c.Servers, 0, &zkproto.ReconfigRequest{CurConfigID: -1, LeavingServers: "1",
		JoiningServers: "server.3=127.0.0.1:2890:3890:observer;2183,server.4=127.0.0.1:2891:3891;2184,server.5=127.0.0.1:2892:3892:observer;2185"})
	cc := membershipChange(c.Servers, next)
	var got []string
	for _, ch := range cc.GetChanges() {
		got = append(got, ch.GetType().String()+" "+string(rune('0'+ch.GetNodeId())))
	}
	want := "ConfChangeAddLearnerNode 3,ConfChangeAddNode 4,ConfChangeAddLearnerNode 5,ConfChangeRemoveNode 1"
	if strings.Join(got, ",") != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
	if membershipChange(c.Servers, c.Servers) != nil {
		t.Fatal("a change for the same members")
	}
}

func TestQuorumSynced(t *testing.T) {
	c := threeMembers(t)
	next, _ := nextMembers(c.Servers, 0, &zkproto.ReconfigRequest{CurConfigID: -1,
		JoiningServers: "server.4=127.0.0.1:2891:3891;2184,server.5=127.0.0.1:2892:3892;2185"})
	st := raftnode.Status{ID: 1, Progress: map[uint64]raftnode.Progress{1: {}, 2: {Active: true}, 3: {Active: true}}}
	if !quorumSynced(next, st) {
		t.Fatal("1, 2, 3 of 5 are a quorum")
	}
	st.Progress[3] = raftnode.Progress{}
	if quorumSynced(next, st) {
		t.Fatal("1, 2 of 5 are not a quorum: NewConfigNoQuorum")
	}
}

func TestReconfigAllowed(t *testing.T) {
	calls := ""
	err := reconfigAllowed(func(path string, perm int32) zkproto.Err {
		calls = path
		if perm != zkproto.PermWrite {
			return zkproto.ErrBadArguments
		}
		return zkproto.ErrNoAuth
	})
	if err != zkproto.ErrNoAuth || calls != "/zookeeper/config" {
		t.Fatalf("%v %q", err, calls)
	}
}
