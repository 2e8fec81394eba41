package zkshell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/store/znode"
)

// zkCli's quota commands (SetQuotaCommand, ListQuotaCommand,
// DelQuotaCommand of ZooKeeper 3.8). A quota on P lives in
// /zookeeper/quota/P: zookeeper_limits holds the limits as a StatsTrack
// ("count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"), zookeeper_stats
// the usage, which the server keeps. The client writes both; the server
// fills in the stats when the stats node is created.

func init() {
	for _, c := range []*command{
		{"setquota", "-n|-b|-N|-B val path", "n:b:N:B:", 1, -1, (*Shell).setQuota},
		{"listquota", "path", "", 1, -1, (*Shell).listQuota},
		{"delquota", "[-n|-b|-N|-B] path", "nbNB", 1, -1, (*Shell).delQuota},
	} {
		commandsByName[c.name] = c
	}
	exclusiveOptions["setquota"] = "nbNB"
	exclusiveOptions["delquota"] = "nbNB"
}

// quotaKeys are the StatsTrack keys of the quota options.
var quotaKeys = map[byte]string{'n': "count", 'b': "bytes", 'N': "countHardLimit", 'B': "byteHardLimit"}

// quotaOption returns the one quota option given (runWords has refused
// two), 0 for none.
func quotaOption(opts map[byte]string) byte {
	for _, l := range []byte("nbNB") {
		if _, ok := opts[l]; ok {
			return l
		}
	}
	return 0
}

func quotaDir(p string) string { return znode.QuotaRoot + p }

func (s *Shell) setQuota(opts map[byte]string, args []string) error {
	p := args[0]
	if strings.HasPrefix(p, znode.QuotaRoot) {
		return fmt.Errorf("cannot set a quota under the path: %s", znode.QuotaRoot)
	}
	opt := quotaOption(opts)
	if opt == 0 {
		return errors.New("org.apache.commons.cli.MissingOptionException: Missing required option: [-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	}
	bits := 64
	if opt == 'n' || opt == 'N' {
		bits = 32
	}
	limit, err := strconv.ParseInt(opts[opt], 10, bits)
	switch {
	case err != nil:
		return errors.New("NumberFormatException happens when parsing the option value")
	case (opt == 'n' || opt == 'N') && limit <= 0:
		return errors.New("the num quota must be greater than zero")
	case (opt == 'b' || opt == 'B') && limit < 0:
		return errors.New("the bytes quota must be greater than or equal to zero")
	}
	if err := checkPath(p); err != nil {
		return err
	}
	if p == "/" { // the quota node's path, /zookeeper/quota/, is invalid
		return errors.New("Path must not end with / character")
	}
	if err := s.checkQuotaPlace(p); err != nil {
		return err
	}
	limits, exists, err := s.readLimits(p)
	if err != nil {
		return err
	}
	limits.Set(quotaKeys[opt], limit)
	if err := s.warnBelowUsage(p, limits); err != nil {
		return err
	}
	return s.writeLimits(p, limits, exists)
}

// checkQuotaPlace refuses a path that does not exist, or that has a
// quota'd child or parent (ZooKeeper allows no nesting of quotas).
func (s *Shell) checkQuotaPlace(p string) error {
	if ok, _, err := s.conn.Exists(s.abs(p)); err != nil {
		return &zkError{err, p}
	} else if !ok {
		return fmt.Errorf("%s does not exist.", p)
	}
	under, err := s.subtree(quotaDir(p))
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return &zkError{err, quotaDir(p)}
	}
	for _, q := range under {
		if strings.HasSuffix(q, "/"+znode.QuotaLimitNode) && parentPath(q) != quotaDir(p) {
			return fmt.Errorf("%s has a child %s which has a quota", p, parentPath(q)[len(znode.QuotaRoot):])
		}
	}
	for parent := parentPath(p); parent != "/"; parent = parentPath(parent) {
		if ok, _, _ := s.conn.Exists(s.abs(quotaDir(parent) + "/" + znode.QuotaLimitNode)); ok {
			return fmt.Errorf("%s has a parent %s which has a quota", p, parent)
		}
	}
	return nil
}

// readLimits returns p's limits, or all -1 when p has no quota yet.
func (s *Shell) readLimits(p string) (limits znode.StatsTrack, exists bool, err error) {
	path := quotaDir(p) + "/" + znode.QuotaLimitNode
	data, _, err := s.conn.Get(s.abs(path))
	switch {
	case errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrInvalidPath):
		return znode.StatsTrack{"count": -1, "bytes": -1, "countHardLimit": -1, "byteHardLimit": -1}, false, nil
	case err != nil:
		return nil, false, &zkError{err, path}
	}
	return znode.ParseStatsTrack(data), true, nil
}

// warnBelowUsage prints zkCli's warnings when a count or bytes limit (soft
// or hard) is below what the subtree already holds; the quota is set all
// the same.
func (s *Shell) warnBelowUsage(p string, limits znode.StatsTrack) error {
	paths, err := s.subtree(p)
	if err != nil {
		return &zkError{err, p}
	}
	var bytes int64
	for _, q := range paths {
		if _, st, err := s.conn.Exists(s.abs(q)); err == nil && st != nil {
			bytes += int64(st.DataLength)
		}
	}
	below := func(used int64, keys ...string) bool {
		for _, k := range keys {
			if v := limits.Get(k); v >= 0 && v < used {
				return true
			}
		}
		return false
	}
	if count := int64(len(paths)); below(count, "count", "countHardLimit") {
		s.printf("[Warning]: the count quota you create is less than the existing count:%d\n", count)
	}
	if below(bytes, "bytes", "byteHardLimit") {
		s.printf("[Warning]: the bytes quota you create is less than the existing bytes:%d\n", bytes)
	}
	return nil
}

// writeLimits sets p's limits, creating its quota nodes when it had none.
func (s *Shell) writeLimits(p string, limits znode.StatsTrack, exists bool) error {
	dir := quotaDir(p)
	if exists {
		if _, err := s.conn.Set(s.abs(dir+"/"+znode.QuotaLimitNode), []byte(limits.String()), -1); err != nil {
			return &zkError{err, dir + "/" + znode.QuotaLimitNode}
		}
		return nil
	}
	path := znode.QuotaRoot
	for _, name := range strings.Split(p[1:], "/") {
		path += "/" + name
		if _, err := s.conn.Create(s.abs(path), nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return &zkError{err, path}
		}
	}
	for _, n := range []struct{ name, data string }{{znode.QuotaLimitNode, limits.String()}, {znode.QuotaStatNode, "count=0,bytes=0"}} {
		if _, err := s.conn.Create(s.abs(dir+"/"+n.name), []byte(n.data), 0, zk.WorldACL(zk.PermAll)); err != nil {
			return &zkError{err, dir + "/" + n.name}
		}
	}
	return nil
}

// resetLimit sets one limit of p back to -1.
func (s *Shell) resetLimit(p, key string) error {
	limits, exists, err := s.readLimits(p)
	if err != nil {
		return err
	}
	if !exists {
		return errNoQuota(p)
	}
	limits.Set(key, -1)
	return s.writeLimits(p, limits, true)
}

func errNoQuota(p string) error { return fmt.Errorf("Quota does not exist for %s", p) }

func (s *Shell) listQuota(opts map[byte]string, args []string) error {
	p := args[0]
	limits := quotaDir(p) + "/" + znode.QuotaLimitNode
	s.printf("absolute path is %s\n", limits)
	data, _, err := s.conn.Get(s.abs(limits))
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrInvalidPath) {
		return fmt.Errorf("quota for %s does not exist.", p)
	}
	if err != nil {
		return &zkError{err, limits}
	}
	s.printf("Output quota for %s %s\n", p, znode.ParseStatsTrack(data))
	stats := quotaDir(p) + "/" + znode.QuotaStatNode
	if data, _, err := s.conn.Get(s.abs(stats)); err == nil {
		s.printf("Output stat for %s %s\n", p, znode.ParseStatsTrack(data))
	}
	return nil
}

// delQuota resets one limit to -1, or without an option removes the quota
// and the quota directories it leaves empty.
func (s *Shell) delQuota(opts map[byte]string, args []string) error {
	p := args[0]
	if opt := quotaOption(opts); opt != 0 {
		return s.resetLimit(p, quotaKeys[opt])
	}
	dir := quotaDir(p)
	if ok, _, err := s.conn.Exists(s.abs(dir + "/" + znode.QuotaLimitNode)); err != nil && !errors.Is(err, zk.ErrInvalidPath) {
		return &zkError{err, dir}
	} else if !ok {
		return errNoQuota(p)
	}
	for _, n := range []string{znode.QuotaLimitNode, znode.QuotaStatNode} {
		if err := s.conn.Delete(s.abs(dir+"/"+n), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return &zkError{err, dir + "/" + n}
		}
	}
	for ; dir != znode.QuotaRoot; dir = parentPath(dir) {
		if kids, _, err := s.conn.Children(s.abs(dir)); err != nil || len(kids) > 0 {
			break
		}
		if err := s.conn.Delete(s.abs(dir), -1); err != nil {
			break
		}
	}
	return nil
}

// parentPath is p's parent ("/" for a top-level node).
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
