package main

import (
	"flag"
	"fmt"
	"io"
)

const runUsage = `usage: zkafka run [flags]

Starts a standalone ZooKeeper server on 127.0.0.1:2181 and one Kafka broker on
127.0.0.1:9092 in one process, with data under ./zkafka-data. No configuration
is needed.
`

const zookeeperUsage = `usage: zkafka zookeeper [flags] zoo.cfg

Starts a ZooKeeper server configured by a standard zoo.cfg (tickTime, dataDir,
clientPort, server.N lines for an ensemble, ...) and the myid file in dataDir.
`

const brokerUsage = `usage: zkafka broker [flags] server.properties

Starts a Kafka broker configured by a standard server.properties (broker.id,
listeners, log.dirs, zookeeper.connect, ...).
`

// newFlagSet returns a flag set that prints usage to stderr.
func newFlagSet(name, usage string, stderr io.Writer) (*flag.FlagSet, *logFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	lf := &logFlags{}
	lf.register(fs)
	return fs, lf
}

// parse parses args; it returns the exit code to use when the command must stop.
func parse(fs *flag.FlagSet, args []string) (stop bool, code int) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return true, 0
		}
		return true, 2
	}
	return false, 0
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs, lf := newFlagSet("run", runUsage, stderr)
	if stop, code := parse(fs, args); stop {
		return code
	}
	log := lf.logger(stderr)
	log.Warn("the ZooKeeper server and the Kafka broker are not built yet; nothing to run")
	return 1
}

func cmdZookeeper(args []string, stdout, stderr io.Writer) int {
	fs, lf := newFlagSet("zookeeper", zookeeperUsage, stderr)
	if stop, code := parse(fs, args); stop {
		return code
	}
	log := lf.logger(stderr)
	log.Warn("the ZooKeeper server is not built yet")
	return 1
}

func cmdBroker(args []string, stdout, stderr io.Writer) int {
	fs, lf := newFlagSet("broker", brokerUsage, stderr)
	if stop, code := parse(fs, args); stop {
		return code
	}
	log := lf.logger(stderr)
	log.Warn("the Kafka broker is not built yet")
	return 1
}
