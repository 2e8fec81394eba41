// Package freeport hands out TCP ports on 127.0.0.1 for servers that a
// test or benchmark starts later, in another process or after a restart.
//
// A port the kernel picks for a listener on :0 comes from the ephemeral
// range, which every outgoing connection on the machine draws from too:
// between the pick and the server's bind, any client socket may take it
// ("address already in use"). So ports are drawn at random from below the
// ephemeral range (ip_local_port_range), checked free by a bind, and never
// handed out twice by one process. Concurrent processes draw
// independently: a clash needs the same random port in the same moment,
// and the bind check catches a port already listening.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// lowest is the bottom of the range ports are drawn from.
const lowest = 10000

var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// Port returns a port free on 127.0.0.1 now, below the ephemeral range,
// not returned before by this process.
func Port() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	top := ephemeralLow()
	for range 1000 {
		p := lowest + rand.IntN(top-lowest)
		if handedOut.ports[p] || !free(p) {
			continue
		}
		handedOut.ports[p] = true
		return p, nil
	}
	return 0, errors.New("freeport: no free port below the ephemeral range after 1000 tries")
}

func free(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read, Linux's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= lowest+1000 {
		return 32768
	}
	return n
}
