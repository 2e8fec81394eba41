package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// zooKeeperPart runs getData on clientPort and on secureClientPort and
// prints ops/s, the ratio and the server's CPU per op.
func zooKeeperPart(s *servers, pool *x509.CertPool) {
	fmt.Printf("== ZooKeeper: getData of a 100-byte znode, %d go-zookeeper sessions (one goroutine each, one request in flight), %v each\n", *zkSessions, *zkDur)
	fmt.Printf("%-18s %10s %14s\n", "port", "ops/s", "server µs/op")
	tlsCfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	var rates [2]float64
	for i, c := range []struct {
		name, addr string
		tls        *tls.Config
	}{
		{"clientPort", s.zkPlain, nil},
		{"secureClientPort", s.zkTLS, tlsCfg},
	} {
		ops, cpuPerOp, err := zkGets(s.zk.Pid(), c.addr, c.tls)
		check(err)
		rates[i] = ops
		fmt.Printf("%-18s %10.0f %14.1f\n", c.name, ops, cpuPerOp)
	}
	fmt.Printf("TLS / plain: %.2f\n", rates[1]/rates[0])
}

func zkSession(addr string, tc *tls.Config) (*zk.Conn, error) {
	dial := zk.Dialer(net.DialTimeout)
	if tc != nil {
		dial = func(network, a string, timeout time.Duration) (net.Conn, error) {
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, a, tc)
		}
	}
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithDialer(dial), zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return c, nil
			}
		case <-deadline:
			c.Close()
			return nil, fmt.Errorf("no session on %s", addr)
		}
	}
}

func zkGets(pid int, addr string, tc *tls.Config) (opsPerSec, cpuMicrosPerOp float64, err error) {
	var conns []*zk.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range *zkSessions {
		c, err := zkSession(addr, tc)
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	path := "/tlsbench"
	if _, err := conns[0].Create(path, make([]byte, 100), 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		return 0, 0, err
	}
	var n atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	cpu0, _ := benchkit.CPUTime(pid)
	start := time.Now()
	end := start.Add(*zkDur)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10_000_000 && time.Now().Before(end); i++ {
				if _, _, err := c.Get(path); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := benchkit.CPUTime(pid)
	if e := failed.Load(); e != nil {
		return 0, 0, fmt.Errorf("get: %v", e)
	}
	ops := float64(n.Load())
	return ops / elapsed.Seconds(), float64((cpu1 - cpu0).Microseconds()) / ops, nil
}
