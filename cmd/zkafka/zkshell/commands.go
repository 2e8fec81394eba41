package zkshell

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/zkproto"
)

// A command is one of zkCli's commands: its usage (after the name), its
// options (zkCli's letters; "v:" takes a value), its argument count and
// what it does.
type command struct {
	name, usage, options string
	minArgs, maxArgs     int // maxArgs -1: any
	run                  func(s *Shell, opts map[byte]string, args []string) error
}

// commandsByName are zkCli's commands (ZooKeeperMain's commandMap).
var commandsByName = map[string]*command{}

func init() {
	for _, c := range []*command{
		{"ls", "[-s] [-w] [-R] path", "swR", 1, 1, (*Shell).ls},
		{"get", "[-s] [-w] path", "sw", 1, 1, (*Shell).get},
		{"set", "[-s] [-v version] path data", "sv:", 2, 2, (*Shell).set},
		{"create", "[-s] [-e] [-c] [-t ttl] path [data] [acl]", "sect:", 1, 3, (*Shell).create},
		{"delete", "[-v version] path", "v:", 1, 1, (*Shell).delete},
		{"deleteall", "path [-b batch size]", "b:", 1, 1, (*Shell).deleteAll},
		{"stat", "[-w] path", "w", 1, 1, (*Shell).stat},
		{"getAcl", "[-s] path", "s", 1, 1, (*Shell).getACL},
		{"setAcl", "[-s] [-v version] [-R] path acl", "sv:R", 2, 2, (*Shell).setACL},
		{"addauth", "scheme auth", "", 1, 2, (*Shell).addAuth},
		{"sync", "path", "", 1, 1, (*Shell).sync},
		{"addWatch", "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", "m:", 1, 1, (*Shell).addWatchCmd},
		{"removewatches", "path [-c|-d|-a] [-l]", "cdal", 1, 1, (*Shell).removeWatches},
		{"getEphemerals", "path", "", 0, 1, (*Shell).getEphemerals},
		{"getAllChildrenNumber", "path", "", 1, 1, (*Shell).getAllChildrenNumber},
		{"whoami", "", "", 0, 0, (*Shell).whoami},
		{"history", "", "", 0, 0, (*Shell).printHistory},
		{"redo", "cmdno", "", 1, 1, (*Shell).redo},
		{"printwatches", "on|off", "", 0, 1, (*Shell).printWatchesCmd},
		{"config", "[-c] [-w] [-s]", "cws", 0, 0, (*Shell).config},
		{"version", "", "", 0, 0, func(s *Shell, _ map[byte]string, _ []string) error {
			s.printf("ZooKeeper CLI version: zkafka zk, the commands of ZooKeeper 3.8's zkCli\n")
			return nil
		}},
		{"connect", "host:port", "", 0, 1, (*Shell).connectCmd},
		{"close", "", "", 0, 0, func(s *Shell, _ map[byte]string, _ []string) error {
			s.disconnect()
			return nil
		}},
		{"quit", "", "", 0, 0, func(*Shell, map[byte]string, []string) error { return errQuit }},
	} {
		commandsByName[c.name] = c
	}
}

// offline are the commands that run without a session (after close).
var offline = map[string]bool{"history": true, "redo": true, "printwatches": true, "version": true,
	"quit": true, "connect": true, "close": true}

// connectCmd is connect [host:port[/chroot]]: a new session, on the same
// server without an argument.
func (s *Shell) connectCmd(opts map[byte]string, args []string) error {
	server := s.server
	if len(args) > 0 {
		server = args[0]
	}
	return s.connect(server)
}

// checkPath is PathUtils.validatePath's first checks, with its messages.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("Path length must be > 0")
	case p[0] != '/':
		return fmt.Errorf("Path must start with / character")
	case len(p) > 1 && p[len(p)-1] == '/':
		return fmt.Errorf("Path must not end with / character")
	case strings.Contains(p, "//"):
		return fmt.Errorf("Invalid path string \"%s\" caused by empty node name specified @%d", p, strings.Index(p, "//")+1)
	}
	return nil
}

func (s *Shell) ls(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	_, watch := opts['w']
	_, withStat := opts['s']
	if _, ok := opts['R']; ok {
		return s.lsRecursive(p)
	}
	var children []string
	var st *zk.Stat
	var err error
	if watch {
		children, st, _, err = s.conn.ChildrenW(s.abs(p))
		s.addWatch(p, watchChild)
	} else {
		children, st, err = s.conn.Children(s.abs(p))
	}
	if err != nil {
		return &zkError{err, p}
	}
	sort.Strings(children)
	if s.json {
		return printJSON(s.out, struct {
			Path     string    `json:"path"`
			Children []string  `json:"children"`
			Stat     *statJSON `json:"stat,omitempty"`
		}{p, append([]string{}, children...), statIf(withStat, st)})
	}
	s.printf("[%s]\n", strings.Join(children, ", "))
	if withStat {
		printStat(s.out, st)
	}
	return nil
}

func statIf(want bool, st *zk.Stat) *statJSON {
	if !want {
		return nil
	}
	return toStatJSON(st)
}

// lsRecursive prints p and every path under it, breadth first, each
// level in order (ZKUtil.listSubTreeBFS).
func (s *Shell) lsRecursive(p string) error {
	paths, err := s.subtree(p)
	if err != nil {
		return &zkError{err, p}
	}
	if s.json {
		return printJSON(s.out, struct {
			Path  string   `json:"path"`
			Paths []string `json:"paths"`
		}{p, paths})
	}
	for _, q := range paths {
		s.printf("%s\n", q)
	}
	return nil
}

// subtree lists p and its descendants breadth first.
func (s *Shell) subtree(p string) ([]string, error) {
	paths := []string{p}
	for i := 0; i < len(paths); i++ {
		children, _, err := s.conn.Children(s.abs(paths[i]))
		if err == zk.ErrNoNode && i > 0 {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		sort.Strings(children)
		for _, c := range children {
			paths = append(paths, join(paths[i], c))
		}
	}
	return paths, nil
}

func join(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

func (s *Shell) get(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	_, watch := opts['w']
	_, withStat := opts['s']
	var data []byte
	var st *zk.Stat
	var err error
	if watch {
		data, st, _, err = s.conn.GetW(s.abs(p))
		if err == nil {
			s.addWatch(p, watchData)
		}
	} else {
		data, st, err = s.conn.Get(s.abs(p))
	}
	if err != nil {
		return &zkError{err, p}
	}
	if s.json {
		var text *string
		if data != nil {
			t := string(data)
			text = &t
		}
		return printJSON(s.out, struct {
			Path string    `json:"path"`
			Data *string   `json:"data"`
			Stat *statJSON `json:"stat,omitempty"`
		}{p, text, statIf(withStat, st)})
	}
	if data == nil {
		s.printf("null\n")
	} else {
		s.printf("%s\n", data)
	}
	if withStat {
		printStat(s.out, st)
	}
	return nil
}

// version reads -v, -1 (any version) without it.
func version(opts map[byte]string) (int32, error) {
	v, ok := opts['v']
	if !ok {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("version %s is not a number", v)
	}
	return int32(n), nil
}

func (s *Shell) set(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	v, err := version(opts)
	if err != nil {
		return err
	}
	st, err := s.conn.Set(s.abs(p), []byte(args[1]), v)
	if err != nil {
		return &zkError{err, p}
	}
	if _, ok := opts['s']; ok {
		printStat(s.out, st)
	}
	return nil
}

// maxTTL is EphemeralType.TTL's largest TTL in milliseconds.
const maxTTL = 1099511627775

func (s *Shell) create(opts map[byte]string, args []string) error {
	p := args[0]
	_, eph := opts['e']
	_, seq := opts['s']
	_, container := opts['c']
	ttlText, hasTTL := opts['t']
	switch {
	case container && (eph || seq):
		return fmt.Errorf("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	case hasTTL && eph:
		return fmt.Errorf("TTLs cannot be used with Ephemeral znodes")
	case hasTTL && container:
		return fmt.Errorf("TTLs cannot be used with Container znodes")
	}
	var ttl int64
	if hasTTL {
		var err error
		if ttl, err = strconv.ParseInt(ttlText, 10, 64); err != nil || ttl <= 0 || ttl > maxTTL {
			return fmt.Errorf("ttl must be positive and cannot be larger than: %d", int64(maxTTL))
		}
	}
	if err := checkPath(p); err != nil && !(seq && strings.HasSuffix(p, "/")) {
		return err
	}
	var data []byte
	if len(args) > 1 {
		data = []byte(args[1])
	}
	acl := zk.WorldACL(zk.PermAll)
	if len(args) > 2 {
		var err error
		if acl, err = parseACL(args[2]); err != nil {
			return err
		}
	}
	flags := int32(0)
	if eph {
		flags |= zk.FlagEphemeral
	}
	if seq {
		flags |= zk.FlagSequence
	}
	var created string
	var err error
	switch {
	case container:
		created, err = s.conn.CreateContainer(s.abs(p), data, zk.FlagContainer, acl)
	case hasTTL:
		flag := int32(zk.FlagTTL)
		if seq {
			flag = zk.FlagPersistentSequentialWithTTL
		}
		created, err = s.conn.CreateTTL(s.abs(p), data, flag, acl, time.Duration(ttl)*time.Millisecond)
	default:
		created, err = s.conn.Create(s.abs(p), data, flags, acl)
	}
	if err != nil {
		if err == zk.ErrInvalidACL {
			fmt.Fprintln(s.errOut, keeperMessage(err, p))
		}
		return &zkError{err, p}
	}
	s.printf("Created %s\n", s.rel(created))
	return nil
}

func (s *Shell) delete(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	v, err := version(opts)
	if err != nil {
		return err
	}
	if err := s.conn.Delete(s.abs(p), v); err != nil {
		return &zkError{err, p}
	}
	return nil
}

// deleteAll deletes p and everything under it, deepest first.
func (s *Shell) deleteAll(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	paths, err := s.subtree(p)
	if err != nil {
		return &zkError{err, p}
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := s.conn.Delete(s.abs(paths[i]), -1); err != nil && err != zk.ErrNoNode {
			return &zkError{err, paths[i]}
		}
	}
	return nil
}

func (s *Shell) stat(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	var ok bool
	var st *zk.Stat
	var err error
	if _, watch := opts['w']; watch {
		ok, st, _, err = s.conn.ExistsW(s.abs(p))
		if err == nil {
			s.addWatch(p, watchData)
		}
	} else {
		ok, st, err = s.conn.Exists(s.abs(p))
	}
	if err == nil && !ok {
		err = zk.ErrNoNode
	}
	if err != nil {
		return &zkError{err, p}
	}
	if s.json {
		return printJSON(s.out, struct {
			Path string    `json:"path"`
			Stat *statJSON `json:"stat"`
		}{p, toStatJSON(st)})
	}
	printStat(s.out, st)
	return nil
}

func (s *Shell) getACL(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	acl, st, err := s.conn.GetACL(s.abs(p))
	if err != nil {
		return &zkError{err, p}
	}
	printACL(s.out, acl)
	if _, ok := opts['s']; ok {
		printStat(s.out, st)
	}
	return nil
}

func (s *Shell) setACL(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	acl, err := parseACL(args[1])
	if err != nil {
		return err
	}
	v, err := version(opts)
	if err != nil {
		return err
	}
	paths := []string{p}
	if _, ok := opts['R']; ok {
		if paths, err = s.subtree(p); err != nil {
			return &zkError{err, p}
		}
	}
	var st *zk.Stat
	for _, q := range paths {
		if st, err = s.conn.SetACL(s.abs(q), acl, v); err != nil {
			return &zkError{err, q}
		}
	}
	if _, ok := opts['s']; ok {
		printStat(s.out, st)
	}
	return nil
}

func (s *Shell) addAuth(opts map[byte]string, args []string) error {
	var auth []byte
	if len(args) > 1 {
		auth = []byte(args[1])
	}
	if err := s.conn.AddAuth(args[0], auth); err != nil {
		return &zkError{err, ""}
	}
	return nil
}

func (s *Shell) sync(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	if _, err := s.conn.Sync(s.abs(p)); err != nil {
		s.printf("Sync has failed. rc=%s\n", codeOf(err))
		return &zkError{err, p}
	}
	s.printf("Sync is OK\n")
	return nil
}

// sideRequest sends req on the shell's session through the sidecar (the
// calls go-zookeeper lacks) and decodes the reply into resp; a server error
// is reported for path p, as zkCli reports it.
func (s *Shell) sideRequest(op zkproto.OpCode, req, resp zkproto.Record, p string) error {
	body, err := s.side.call(op, req, s.timeout)
	if err != nil {
		return &zkError{err, p}
	}
	r := zkproto.NewReader(body)
	resp.Decode(r)
	return r.Complete()
}

func (s *Shell) whoami(opts map[byte]string, args []string) error {
	var res zkproto.WhoAmIResponse
	if err := s.sideRequest(zkproto.OpWhoAmI, nil, &res, ""); err != nil {
		return err
	}
	s.printf("Auth scheme: User\n")
	for _, c := range res.ClientInfo {
		s.printf("%s: %s\n", c.AuthScheme, c.User)
	}
	return nil
}

func (s *Shell) getEphemerals(opts map[byte]string, args []string) error {
	p := "/"
	if len(args) > 0 {
		p = args[0]
	}
	if err := checkPath(p); err != nil {
		return err
	}
	var res zkproto.GetEphemeralsResponse
	if err := s.sideRequest(zkproto.OpGetEphemerals, &zkproto.GetEphemeralsRequest{PrefixPath: s.abs(p)}, &res, p); err != nil {
		return err
	}
	paths := make([]string, 0, len(res.Ephemerals))
	for _, e := range res.Ephemerals {
		if s.chroot == "" || strings.HasPrefix(e, s.chroot+"/") {
			paths = append(paths, s.rel(e))
		}
	}
	s.printf("[%s]\n", strings.Join(paths, ", "))
	return nil
}

func (s *Shell) getAllChildrenNumber(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	var res zkproto.GetAllChildrenNumberResponse
	if err := s.sideRequest(zkproto.OpGetAllChildrenNumber, &zkproto.GetAllChildrenNumberRequest{Path: s.abs(p)}, &res, p); err != nil {
		return err
	}
	s.printf("%d\n", res.TotalNumber)
	return nil
}

// printHistory prints the last eleven lines, this one included, numbered.
func (s *Shell) printHistory(opts map[byte]string, args []string) error {
	last := len(s.history) - 1
	for i := max(0, last-10); i <= last; i++ {
		s.printf("%d - %s\n", i, s.history[i])
	}
	return nil
}

// redo runs line cmdno of the history again, in place of the redo line.
func (s *Shell) redo(opts map[byte]string, args []string) error {
	n, err := strconv.Atoi(args[0])
	last := len(s.history) - 1
	if err != nil || n < 0 || n >= last {
		return fmt.Errorf("Command index out of range")
	}
	words := splitLine(s.history[n])
	if words[0] == "redo" {
		return fmt.Errorf("No redoing redos")
	}
	s.history[last] = s.history[n]
	s.outMu.Unlock()
	defer s.outMu.Lock()
	return s.runWords(words)
}

// printWatchesCmd is printwatches on|off: whether watch events are
// printed (zkCli prints nothing when asked without an argument).
func (s *Shell) printWatchesCmd(opts map[byte]string, args []string) error {
	if len(args) == 1 {
		s.hideWatches = args[0] != "on"
	}
	return nil
}

// configNode is where ZooKeeper keeps its dynamic configuration.
const configNode = "/zookeeper/config"

// config is get on /zookeeper/config, with the chroot ignored as zkCli's
// getConfig does; -c prints the client's connection string form.
func (s *Shell) config(opts map[byte]string, args []string) error {
	var data []byte
	var st *zk.Stat
	var err error
	if _, watch := opts['w']; watch {
		data, st, _, err = s.conn.GetW(configNode)
		if err == nil {
			s.addWatch(configNode, watchData)
		}
	} else {
		data, st, err = s.conn.Get(configNode)
	}
	if err != nil {
		return &zkError{err, configNode}
	}
	if _, ok := opts['c']; ok {
		s.printf("%s\n", clientConfig(string(data)))
	} else {
		s.printf("%s\n", data)
	}
	if _, ok := opts['s']; ok {
		printStat(s.out, st)
	}
	return nil
}

// clientConfig is ConfigUtils.getClientConfigStr: the client addresses of
// the servers in a dynamic configuration, and its version.
func clientConfig(cfg string) string {
	var version string
	var addrs []string
	for _, line := range strings.Split(cfg, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if k == "version" {
			version = v
		} else if _, client, ok := strings.Cut(v, ";"); ok && strings.HasPrefix(k, "server.") {
			if i := strings.LastIndexByte(client, ':'); i >= 0 && strings.HasPrefix(client, "0.0.0.0") {
				client = "localhost" + client[i:]
			}
			addrs = append(addrs, client)
		}
	}
	return version + " " + strings.Join(addrs, ",")
}
