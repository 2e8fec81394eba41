package zkshell

import (
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/zkproto"
)

// watchKind is the kind of a watch the shell has set, as the Java client's
// ZKWatchManager keeps them: removewatches checks them before it asks the
// server, and prints one "...WatchRemoved" event per kind it removed.
type watchKind int

const (
	watchData watchKind = iota // get -w, stat -w
	watchChild
	watchPersistent // addWatch (either mode)
)

type watchKey struct {
	path string
	kind watchKind
}

// addWatch records a watch set on p (the shell's path, chroot excluded).
func (s *Shell) addWatch(p string, kind watchKind) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.watches[watchKey{p, kind}] = true
}

// fired forgets the one-shot watches an event on p triggers.
func (s *Shell) fired(p string, typ zk.EventType) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	switch typ {
	case zk.EventNodeChildrenChanged:
		delete(s.watches, watchKey{p, watchChild})
	case zk.EventNodeDeleted:
		delete(s.watches, watchKey{p, watchChild})
		delete(s.watches, watchKey{p, watchData})
	case zk.EventNodeCreated, zk.EventNodeDataChanged:
		delete(s.watches, watchKey{p, watchData})
	}
}

// queueEvent keeps an event of the session for printing. The client calls
// it from its reading goroutine before it hands over the reply that follows
// the event, so a command's events are queued by the time the command
// returns, and runWords prints them before the command's output, in the
// order zkCli prints them.
func (s *Shell) queueEvent(c *connection, ev zk.Event) {
	if c.gen != s.gen.Load() || ev.Type == zk.EventNotWatching {
		return
	}
	if ev.Type == zk.EventSession && ev.State == zk.StateHasSession && c.sessions.Add(1) > 1 {
		go s.rewatch(c) // not here: the client's reading goroutine must deliver the replies
	}
	if ev.Type == zk.EventSession {
		switch ev.State {
		case zk.StateHasSession, zk.StateDisconnected, zk.StateExpired, zk.StateAuthFailed:
		default:
			return
		}
		if !s.sessionEvents {
			return
		}
	}
	s.eventMu.Lock()
	s.events = append(s.events, ev)
	s.eventMu.Unlock()
	select {
	case s.eventReady <- struct{}{}:
	default:
	}
}

// printEvents prints queued events that arrive between commands.
func (s *Shell) printEvents() {
	for range s.eventReady {
		s.outMu.Lock()
		s.flushEventsLocked()
		s.outMu.Unlock()
	}
}

// flushEventsLocked prints the queued events as zkCli's watcher does.
// s.outMu must be held.
func (s *Shell) flushEventsLocked() {
	s.eventMu.Lock()
	events := s.events
	s.events = nil
	s.eventMu.Unlock()
	for _, ev := range events {
		if ev.Type == zk.EventSession {
			printEvent(s.out, -1, ev.State, "")
			continue
		}
		p := s.rel(ev.Path)
		s.fired(p, ev.Type)
		if !s.hideWatches {
			printEvent(s.out, ev.Type, ev.State, p)
		}
	}
}

// addWatchModes are AddWatchMode's names.
var addWatchModes = map[string]int32{
	"PERSISTENT":           zkproto.AddWatchPersistent,
	"PERSISTENT_RECURSIVE": zkproto.AddWatchPersistentRecursive,
}

func (s *Shell) addWatchCmd(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	mode := zkproto.AddWatchPersistentRecursive
	if m, ok := opts['m']; ok {
		var known bool
		if mode, known = addWatchModes[strings.ToUpper(m)]; !known {
			return fmt.Errorf("%s is not a valid mode; it is one of [PERSISTENT, PERSISTENT_RECURSIVE]", m)
		}
	}
	if _, err := s.side.call(zkproto.OpAddWatch, &zkproto.AddWatchRequest{Path: s.abs(p), Mode: mode}, s.timeout); err != nil {
		return &zkError{err, p}
	}
	s.addWatch(p, watchPersistent)
	s.watchMu.Lock()
	s.persistentModes[p] = mode
	s.watchMu.Unlock()
	return nil
}

// rewatch sets the persistent watches again on a new connection: the
// server keeps watches per connection, and the client library re-sets only
// its own one-shot watches (setWatches), not addWatch's, which the Java
// client re-sets too (setWatches2).
func (s *Shell) rewatch(c *connection) {
	s.watchMu.Lock()
	modes := make(map[string]int32, len(s.persistentModes))
	for p, m := range s.persistentModes {
		modes[p] = m
	}
	s.watchMu.Unlock()
	for p, m := range modes {
		if _, err := c.side.call(zkproto.OpAddWatch, &zkproto.AddWatchRequest{Path: chrooted(c.chroot, p), Mode: m}, s.timeout); err != nil {
			s.outMu.Lock()
			fmt.Fprintf(s.errOut, "cannot set the watch on %s again after reconnecting: %s\n", p, keeperMessage(err, p))
			s.outMu.Unlock()
		}
	}
}

// removeWatches is removewatches path [-c|-d|-a] [-l]: the kinds asked
// for must be set on p (else NoWatcher, as the Java client checks), then
// the server forgets them (unless -l, local only) and one event per kind
// removed is printed, as the Java client delivers them.
func (s *Shell) removeWatches(opts map[byte]string, args []string) error {
	p := args[0]
	if err := checkPath(p); err != nil {
		return err
	}
	watcherType, kinds := zkproto.WatcherAny, []watchKind{watchChild, watchData, watchPersistent}
	if _, ok := opts['c']; ok {
		watcherType, kinds = zkproto.WatcherChildren, []watchKind{watchChild}
	} else if _, ok := opts['d']; ok {
		watcherType, kinds = zkproto.WatcherData, []watchKind{watchData}
	}
	s.watchMu.Lock()
	var found []watchKind
	for _, k := range kinds {
		if s.watches[watchKey{p, k}] {
			found = append(found, k)
		}
	}
	s.watchMu.Unlock()
	if len(found) == 0 {
		return &zkError{zkproto.ErrNoWatcher, p}
	}
	if _, local := opts['l']; !local {
		if _, err := s.side.call(zkproto.OpRemoveWatches, &zkproto.RemoveWatchesRequest{Path: s.abs(p), Type: watcherType}, s.timeout); err != nil {
			return &zkError{err, p}
		}
	}
	s.watchMu.Lock()
	for _, k := range found {
		delete(s.watches, watchKey{p, k})
		if k == watchPersistent {
			delete(s.persistentModes, p)
		}
	}
	s.watchMu.Unlock()
	for _, k := range found {
		printEvent(s.out, removedEvents[k], zk.StateSyncConnected, p)
	}
	return nil
}

// removedEvents are the event types of a removed watch, by kind.
var removedEvents = map[watchKind]zk.EventType{
	watchData:       5, // DataWatchRemoved
	watchChild:      6, // ChildWatchRemoved
	watchPersistent: 7, // PersistentWatchRemoved
}
