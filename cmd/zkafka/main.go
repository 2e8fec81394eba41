// Command zkafka is one binary that is a drop-in ZooKeeper server (standalone
// or an ensemble) and a Kafka broker that keeps its cluster metadata in
// ZooKeeper.
//
// Usage:
//
//	zkafka run                         ZooKeeper on 127.0.0.1:2181 and one broker on 127.0.0.1:9092
//	zkafka zookeeper zoo.cfg           a ZooKeeper server from a standard zoo.cfg
//	zkafka broker server.properties    a Kafka broker from a standard server.properties
//	zkafka version
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	usage   string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "start ZooKeeper and one Kafka broker in one process, no configuration needed", runUsage, cmdRun},
		{"zookeeper", "start a ZooKeeper server from a zoo.cfg", zookeeperUsage, cmdZookeeper},
		{"broker", "start a Kafka broker from a server.properties", brokerUsage, cmdBroker},
		{"version", "print the version", "usage: zkafka version\n", cmdVersion},
	}
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					fmt.Fprint(stdout, c.usage)
					return 0
				}
			}
		}
		printHelp(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "zkafka: unknown command %q\n\n", args[0])
	printHelp(stderr)
	return 2
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, "zkafka: a drop-in ZooKeeper server and Kafka broker in one binary\n\nusage: zkafka <command> [arguments]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'zkafka help <command>' or 'zkafka <command> -h' for details.\n")
}
