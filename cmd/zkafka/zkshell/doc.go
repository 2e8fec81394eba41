// Package zkshell is `zkafka zk`: a ZooKeeper shell with zkCli.sh's
// commands, their spellings and their output (Apache ZooKeeper 3.8), run
// one command from the arguments, a script from stdin, or interactively on
// a terminal with zkCli's prompt, a history and Tab completion of command
// names and paths.
//
//	zkafka zk --zookeeper 127.0.0.1:2181/chroot ls -R /
//	zkafka zk -server 127.0.0.1:2181 -o json get /a
//
// What a person sees is zkCli's: results on stdout, zkCli's error lines on
// stderr ("Node does not exist: /a"), watch events as its watcher prints
// them ("WATCHER::" then "WatchedEvent state:SyncConnected
// type:NodeDataChanged path:/a"), printed before the output of the command
// that triggered them, as zkCli prints them. -o json prints ls, get and
// stat as one JSON object a line for scripts.
//
// Files: command.go (the cobra command, Dial, the chroot), shell.go (the
// line parser and dispatch), commands.go (one method per command),
// watches.go (events, addWatch, removewatches), quota.go (setquota, listquota,
// delquota, with the StatsTrack format of store/znode), sidecar.go (the requests
// go-zookeeper lacks), format.go (zkCli's output formats), interactive.go
// (readline, the prompt, completion), errors.go (zkCli's error messages).
//
// The client is github.com/go-zookeeper/zk. It lacks addWatch,
// removeWatches, whoAmI, getEphemerals and getAllChildrenNumber, which
// must run on the shell's own session; sidecar.go sends them, encoded with
// zkproto, on the client's own connection (see sidecar).
//
// Tests compare every command's output with what zkCli.sh printed for it:
// compat-tests/zkcli/expected.txt, testdata/more.txt and testdata/quota.txt, recorded from
// Apache ZooKeeper; with -tags compat, TestShellMatchesZkCliOnApache runs
// zkCli.sh itself beside the shell against Apache ZooKeeper.
package zkshell
