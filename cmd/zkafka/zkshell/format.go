package zkshell

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// printStat prints a Stat as zkCli does (StatPrinter): times in the local
// time zone as Java's Date.toString prints them.
func printStat(w io.Writer, st *zk.Stat) {
	fmt.Fprintf(w, "cZxid = 0x%x\n", st.Czxid)
	fmt.Fprintf(w, "ctime = %s\n", javaDate(st.Ctime))
	fmt.Fprintf(w, "mZxid = 0x%x\n", st.Mzxid)
	fmt.Fprintf(w, "mtime = %s\n", javaDate(st.Mtime))
	fmt.Fprintf(w, "pZxid = 0x%x\n", st.Pzxid)
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = 0x%x\n", st.EphemeralOwner)
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// javaDate is java.util.Date.toString: "Tue Dec 01 09:52:31 UTC 2026".
func javaDate(ms int64) string {
	return time.UnixMilli(ms).Format("Mon Jan 02 15:04:05 MST 2006")
}

// statJSON is a Stat for -o json, with zkCli's field names.
type statJSON struct {
	Czxid          int64 `json:"cZxid"`
	Ctime          int64 `json:"ctime"`
	Mzxid          int64 `json:"mZxid"`
	Mtime          int64 `json:"mtime"`
	Pzxid          int64 `json:"pZxid"`
	Cversion       int32 `json:"cversion"`
	DataVersion    int32 `json:"dataVersion"`
	ACLVersion     int32 `json:"aclVersion"`
	EphemeralOwner int64 `json:"ephemeralOwner"`
	DataLength     int32 `json:"dataLength"`
	NumChildren    int32 `json:"numChildren"`
}

func toStatJSON(st *zk.Stat) *statJSON {
	if st == nil {
		return nil
	}
	return &statJSON{st.Czxid, st.Ctime, st.Mzxid, st.Mtime, st.Pzxid, st.Cversion, st.Version,
		st.Aversion, st.EphemeralOwner, st.DataLength, st.NumChildren}
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// printACL prints an ACL list as zkCli's getAcl does.
func printACL(w io.Writer, acl []zk.ACL) {
	for _, a := range acl {
		fmt.Fprintf(w, "'%s,'%s\n: %s\n", a.Scheme, a.ID, permString(a.Perms))
	}
}

// permString is ZooKeeper's "cdrwa" spelling of permission bits.
func permString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit  int32
		char byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.char)
		}
	}
	return b.String()
}

// parseACL reads zkCli's ACL argument: scheme:id:perms[,scheme:id:perms...];
// the id may hold colons (digest:user:hash:perms).
func parseACL(text string) ([]zk.ACL, error) {
	var acl []zk.ACL
	for _, one := range strings.Split(text, ",") {
		first := strings.IndexByte(one, ':')
		last := strings.LastIndexByte(one, ':')
		if first < 0 || first == last {
			return nil, fmt.Errorf("%s does not have the form scheme:id:perm", one)
		}
		perms, err := parsePerms(one[last+1:])
		if err != nil {
			return nil, err
		}
		acl = append(acl, zk.ACL{Scheme: one[:first], ID: one[first+1 : last], Perms: perms})
	}
	return acl, nil
}

func parsePerms(text string) (int32, error) {
	var perms int32
	for _, c := range text {
		switch c {
		case 'r':
			perms |= zk.PermRead
		case 'w':
			perms |= zk.PermWrite
		case 'c':
			perms |= zk.PermCreate
		case 'd':
			perms |= zk.PermDelete
		case 'a':
			perms |= zk.PermAdmin
		default:
			return 0, fmt.Errorf("Unknown perm type: %c", c)
		}
	}
	return perms, nil
}

// eventTypes and keeperStates are Watcher.Event's names, as WatchedEvent's
// toString prints them.
var eventTypes = map[zk.EventType]string{
	-1: "None", 1: "NodeCreated", 2: "NodeDeleted", 3: "NodeDataChanged", 4: "NodeChildrenChanged",
	5: "DataWatchRemoved", 6: "ChildWatchRemoved", 7: "PersistentWatchRemoved",
}

var keeperStates = map[zk.State]string{
	zk.StateDisconnected: "Disconnected", zk.StateSyncConnected: "SyncConnected", zk.StateAuthFailed: "AuthFailed",
	zk.StateConnectedReadOnly: "ConnectedReadOnly", zk.StateSaslAuthenticated: "SaslAuthenticated",
	zk.StateExpired: "Expired", zk.StateHasSession: "SyncConnected", 7: "Closed",
}

// printEvent prints a watch event as zkCli's watcher does.
func printEvent(w io.Writer, typ zk.EventType, state zk.State, path string) {
	if path == "" {
		path = "null"
	}
	typeName, ok := eventTypes[typ]
	if !ok {
		typeName = fmt.Sprint(int32(typ))
	}
	stateName, ok := keeperStates[state]
	if !ok {
		stateName = fmt.Sprint(int32(state))
	}
	fmt.Fprintf(w, "\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s\n", stateName, typeName, path)
}
