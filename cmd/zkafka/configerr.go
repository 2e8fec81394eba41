package main

import (
	"fmt"
	"io"
	"strings"
)

// configError reports a configuration that is not allowed — a bad value
// in zoo.cfg or server.properties (a *properties.Error names the file, the
// line, the key, the value and what is allowed), a file that cannot be
// read, a bad flag value — as one plain line on stderr, and gives the exit
// status of a usage error, 2. It is not a log record: the line is for the
// person who wrote the file, whatever -log-format says.
func configError(stderr io.Writer, err error) int {
	msg := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(err.Error())
	fmt.Fprintf(stderr, "zkafka: %s\n", msg)
	return 2
}
