package zkgo

import (
	"bufio"
	"net"
	"time"
)

func netDial(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, 5*time.Second) }

func newReader(nc net.Conn) *bufio.Reader { return bufio.NewReader(nc) }

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
