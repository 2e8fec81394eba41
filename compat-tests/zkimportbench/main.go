// Command zkimportbench measures zk-import (issue 14): it writes an Apache
// ZooKeeper data directory of -znodes znodes (100-byte values, in groups
// of 1000) and a -txns txn log on top (half creates, half setData), then
// imports it into a zkafka data directory in a child process (znodes/s,
// MB/s, the child's peak RSS) and times Apache ZooKeeper 3.8 loading the
// same directory at start-up (to serving, and the load times it logs).
// Servers listen on 127.0.0.1 only.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/quorum"
	"github.com/zkafka/zkafka/store/apachezk"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

const (
	apacheJar  = "/usr/share/java/zookeeper.jar"
	slf4jLog4j = "/usr/share/java/slf4j-log4j12.jar"
	log4jJar   = "/usr/share/java/log4j-1.2.jar"
	group      = 1000
	baseZxid   = 0x100000000
)

func main() {
	znodes := flag.Int("znodes", 1000000, "znodes in the snapshot")
	txns := flag.Int("txns", 100000, "txns in the log")
	importDir := flag.String("import", "", "internal: import this dir into -cfg and exit")
	cfgPath := flag.String("cfg", "", "internal: the zoo.cfg of -import")
	flag.Parse()
	if *importDir != "" {
		os.Exit(runImport(*importDir, *cfgPath))
	}
	work, err := os.MkdirTemp("", "zkimportbench")
	check(err)
	defer os.RemoveAll(work)
	src := filepath.Join(work, "apache", "data", "version-2")
	check(os.MkdirAll(src, 0o755))
	t0 := time.Now()
	check(generate(src, *znodes, *txns))
	bytesIn := dirBytes(src)
	fmt.Printf("generated %d znodes + %d txns (%.1f MB) in %v\n", *znodes, *txns, float64(bytesIn)/1e6, time.Since(t0).Round(time.Millisecond))

	// zkafka: the import in a child process, for its peak RSS.
	cfg := filepath.Join(work, "zoo.cfg")
	check(os.WriteFile(cfg, []byte(fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=2181\n", filepath.Join(work, "zkafka"))), 0o644))
	self, err := os.Executable()
	check(err)
	cmd := exec.Command(self, "-import", filepath.Dir(src), "-cfg", cfg)
	cmd.Stderr = os.Stderr
	t0 = time.Now()
	out, err := cmd.Output()
	check(err)
	d := time.Since(t0)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	total := *znodes + *txns/2
	fmt.Printf("zkafka zk-import: %v (%s), %.0f znodes/s, %.1f MB/s, peak RSS %.0f MB\n",
		d.Round(time.Millisecond), strings.TrimSpace(string(out)), float64(total)/d.Seconds(), float64(bytesIn)/1e6/d.Seconds(), float64(rss)/1e6)

	// Apache ZooKeeper loading the same directory.
	if err := apacheLoad(filepath.Join(work, "apache")); err != nil {
		fmt.Printf("Apache ZooKeeper load: not measured: %v\n", err)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkimportbench:", err)
		os.Exit(1)
	}
}

// generate writes snapshot.<base+znodes> and a log of txns after it.
func generate(dir string, znodes, txns int) error {
	value := bytes.Repeat([]byte("v"), 100)
	groups := (znodes + group - 1) / group
	recs := make([]znode.Record, 0, znodes+groups+3)
	open := zkproto.OpenACLUnsafe
	recs = append(recs, znode.Record{Path: "/", Data: []byte{}, ACL: open, Cversion: 2},
		znode.Record{Path: "/zookeeper", Data: []byte{}, ACL: open},
		znode.Record{Path: "/bench", Data: []byte{}, ACL: open, Cversion: int32(groups)})
	zxid := int64(baseZxid)
	for g := 0; g < groups; g++ {
		zxid++
		recs = append(recs, znode.Record{Path: fmt.Sprintf("/bench/g%04d", g), Data: []byte{}, ACL: open, Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Cversion: group})
	}
	for i := 0; i < znodes; i++ {
		zxid++
		recs = append(recs, znode.Record{Path: fmt.Sprintf("/bench/g%04d/n%07d", i/group, i), Data: value, ACL: open,
			Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: zxid, Mtime: zxid})
	}
	tree, err := znode.Build(znode.Options{}, zxid, nil, recs)
	if err != nil {
		return err
	}
	recs = nil
	if _, err := apachezk.WriteSnapshotFile(filepath.Dir(dir), tree, zxid); err != nil {
		return err
	}
	l, err := apachezk.CreateLog(dir, zxid+1)
	if err != nil {
		return err
	}
	for i := 0; i < txns; i++ {
		zxid++
		g := i % groups
		if i%2 == 0 {
			l.Create(0, zxid, zxid, fmt.Sprintf("/bench/g%04d/l%07d", g, i), value, open, int32(group+1+i/(2*groups)))
		} else {
			l.SetData(0, zxid, zxid, fmt.Sprintf("/bench/g%04d/n%07d", i/2%znodes/group, i/2%znodes), value[:50], 1)
		}
	}
	return l.Close()
}

func runImport(dir, cfgPath string) int {
	cfg, err := quorum.LoadConfig(cfgPath, slog.New(slog.DiscardHandler))
	check(err)
	dt, info, err := apachezk.LoadDir(dir)
	check(err)
	tree, err := dt.Tree(quorum.TreeOptions(cfg))
	check(err)
	dt = nil
	check(quorum.ImportTree(cfg, tree))
	fmt.Printf("%d znodes at zxid 0x%x, %d txns replayed", tree.NodeCount(), tree.LastZxid(), info.Txns)
	return 0
}

func dirBytes(dir string) int64 {
	var n int64
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if fi, err := de.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

const log4jProperties = `log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
`

// apacheLoad starts Apache ZooKeeper on dir/data (heap 4 GB) and reports
// the time to serving and what it logs about the load.
func apacheLoad(dir string) error {
	for _, p := range []string{apacheJar, slf4jLog4j, log4jJar} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("apache zookeeper is not installed (%s missing)", p)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return err
	}
	port, err := benchkit.FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := filepath.Join(dir, "zoo.cfg")
	os.WriteFile(cfg, []byte(fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n",
		filepath.Join(dir, "data"), port)), 0o644)
	os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(log4jProperties), 0o644)
	logPath := filepath.Join(dir, "server.log")
	t0 := time.Now()
	p, err := benchkit.Start("zookeeper", logPath, dir, java, "-Xmx4g",
		"-Dlog4j.configuration=file:"+filepath.Join(dir, "log4j.properties"),
		"-cp", strings.Join([]string{dir, apacheJar, slf4jLog4j, log4jJar}, ":"),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	if err != nil {
		return err
	}
	defer p.Stop(15 * time.Second)
	if err := p.WaitReady(5*time.Minute, benchkit.DialReady(addr)); err != nil {
		return err
	}
	for time.Since(t0) < 5*time.Minute && !strings.Contains(readFile(logPath), "Snapshot taken") {
		time.Sleep(50 * time.Millisecond)
	}
	d := time.Since(t0)
	log := readFile(logPath)
	snap := regexp.MustCompile(`Snapshot loaded in (\d+) ms`).FindStringSubmatch(log)
	txn := regexp.MustCompile(`(\d+) txns loaded in (\d+) ms`).FindStringSubmatch(log)
	detail := ""
	if snap != nil {
		detail += fmt.Sprintf(", ZKDatabase load %s ms", snap[1])
	}
	if txn != nil {
		detail += fmt.Sprintf(" (%s txns replayed in %s ms)", txn[1], txn[2])
	}
	mem, _ := benchkit.ReadMemory(p.Pid())
	fmt.Printf("Apache ZooKeeper 3.8 start-up on the same dir: %v to its start-up snapshot (JVM start included)%s, peak RSS %.0f MB\n",
		d.Round(time.Millisecond), detail, float64(mem.HWM)/1e6)
	return nil
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
