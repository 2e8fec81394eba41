// Command kafkabench measures zkafka's Kafka broker (`zkafka broker
// server.properties` with `zkafka zookeeper zoo.cfg`, each a real process
// on 127.0.0.1) in one run and prints a table:
//
//   - this machine's limits, measured in the same run: buffered sequential
//     writes to the log's file system, and one loopback TCP stream between
//     two processes;
//
//   - a raw client of its own: Produce v7 requests encoded once (one
//     uncompressed batch each) and Fetch v4 requests whose responses are
//     read without decoding records, pipelined on one connection (produce
//     also on -raw-conns connections to as many partitions); MB/s as a
//     ratio of the limits, and the broker's CPU seconds per GB from
//     /proc/<pid>/stat against 1.25 × this machine's own (writer +
//     receiver for produce, sender for fetch); beside the fetch, a
//     sendfile limit (the fetched segment sent by sendfile(2) to a reader
//     process, streamed, as the broker sends records) with the fetch's
//     rate and CPU against it, and the fetch's wait for each response's
//     first byte (the pause of one fetch in flight);
//
//   - franz-go producing (1 and 8 partitions, acks=1 and acks=all,
//     none/lz4/zstd) and consuming 1 KiB records: records/s, MB/s, produce
//     p50/p99 and broker CPU per GB; consuming also the consumer's own CPU
//     per GB and the cores it kept busy;
//
//   - end-to-end latency at a fixed rate (-e2e-rate, 50 MB/s), quiet and
//     with -e2e-burn threads spinning in another process, with the
//     produce acknowledgement's latency beside it (which path a tail is in);
//
//   - the same franz-go cases against franz-go's in-memory kfake broker
//     (its own process) for the ≥2× comparison.
//
// The one-minute load average is printed beside figures: on a shared
// machine compare only ratios taken in one run.
//
//	go run ./compat-tests/kafkabench -zkafka bin/zkafka
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

var (
	zkafkaBin = flag.String("zkafka", "bin/zkafka", "zkafka binary")
	dataDir   = flag.String("dir", "", "directory for the logs (default: a temporary directory under the working directory, so on its file system)")
	limitDur  = flag.Duration("limit-dur", time.Second, "duration of each limit measurement")
	rawDur    = flag.Duration("raw-dur", 4*time.Second, "raw produce duration")
	rawMax    = flag.Int64("raw-bytes", 2<<30, "raw produce byte bound (kept under the kernel's dirty-page background threshold, like the write limit)")
	rawRecs   = flag.Int("raw-records", 256, "records of 1 KiB per raw produce batch")
	rawDepth  = flag.Int("raw-depth", 8, "raw requests in flight per connection")
	rawConns  = flag.Int("raw-conns", 8, "connections (and partitions) of the second raw produce case")
	rawFetchN = flag.Int("raw-fetch-batches", 32, "batches of max bytes per raw fetch (one fetch in flight)")
	caseDur   = flag.Duration("dur", 2*time.Second, "duration of each franz-go produce case")
	caseMax   = flag.Int("max-records", 2000000, "record bound of each franz-go produce case")
	codecs    = flag.String("codecs", "none,lz4,zstd", "franz-go produce codecs")
	partsArg  = flag.String("partitions", "1,8", "franz-go partition counts")
	e2eRate   = flag.Float64("e2e-rate", 50e6, "end-to-end produce rate, bytes/s")
	e2eDur    = flag.Duration("e2e-dur", 4*time.Second, "end-to-end measured duration")
	e2eBurn   = flag.Int("e2e-burn", 2, "busy-looping threads of the contended end-to-end cases (0: none)")
	kfakeOn   = flag.Bool("kfake", true, "run the franz-go cases against kfake too")
	only      = flag.String("only", "", "comma-separated parts to run: limits,raw,franz,e2e,kfake (default all)")
	profile   = flag.String("cpuprofile", "", "run the broker in-process under runtime/pprof and write its CPU profile here (an execution trace if the name ends in .trace)")
	kProfile  = flag.String("kfake-cpuprofile", "", "write kfake's CPU profile here")

	serveBrokerProps = flag.String("serve-broker", "", "internal: serve package broker from this server.properties")
	serveKfakePort   = flag.Int("serve-kfake", 0, "internal: serve kfake on this port")
	tcpSinkPort      = flag.Int("tcp-sink", 0, "internal: loopback sink on this port")
	tcpSinkDir       = flag.String("tcp-sink-dir", "", "internal: the sink writes what it reads to a new file here per connection")
	tcpSinkChunk     = flag.Int("tcp-sink-chunk", 1<<20, "internal: the sink's read size")
	burnThreads      = flag.Int("burn", 0, "internal: busy-loop this many threads until killed")
)

const recSize = 1024

func main() {
	flag.Parse()
	switch {
	case *serveBrokerProps != "":
		os.Exit(serveBroker(*serveBrokerProps, *profile))
	case *serveKfakePort != 0:
		os.Exit(serveKfake(*serveKfakePort, *profile))
	case *tcpSinkPort != 0:
		os.Exit(tcpSink(*tcpSinkPort, *tcpSinkDir, *tcpSinkChunk))
	case *burnThreads > 0:
		burn(*burnThreads)
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts[p] = true
		}
	}
	want := func(p string) bool { return len(parts) == 0 || parts[p] }
	bin, err := filepath.Abs(*zkafkaBin)
	check(err)
	dir := *dataDir
	if dir == "" {
		dir, err = os.MkdirTemp(".", "kafkabench-")
		check(err)
		d := dir
		benchkit.AtExit(func() { os.RemoveAll(d) })
	}
	dir, _ = filepath.Abs(dir)
	start := time.Now()
	val := payload(recSize)

	var diskL, tcpL, sockFileL limit
	if want("limits") || want("raw") {
		diskL, err = diskLimit(filepath.Join(dir, "limits"), *rawMax, *rawRecs*recSize, *limitDur, 3)
		check(err)
		tcpL, err = loopbackLimit(dir, *limitDur, 3)
		check(err)
		sockFileL, err = socketFileLimit(dir, *rawRecs*recSize, *limitDur, 3)
		check(err)
	}

	c, err := startCluster(bin, filepath.Join(dir, "zkafka"), *profile)
	check(err)
	benchkit.AtExit(c.stop)
	bpid := c.broker.Pid()
	fmt.Printf("zkafka broker: %s (pid %d), log dir %s; 1 KiB records\n\n", c.how, bpid, c.logDir)

	fmt.Printf("== this machine's limits (best of 3, up to %v each; writes up to %d MiB in %d KiB writes, a raw batch's size, no fsync)\n",
		*limitDur, *rawMax>>20, *rawRecs*recSize>>10)
	disk, tcp := diskL.rate, tcpL.rate
	fmt.Printf("%-44s %9s %-20s\n", "", "MB/s", "CPU s/GB")
	fmt.Printf("%-44s %9.0f writer %.3f\n", "buffered sequential write, log file system", disk/1e6, diskL.writeCPU)
	if f := diskL.first; f != nil {
		fmt.Printf("%-44s %9.0f writer %.3f\n", "  its first run (pages not written lately)", f.rate/1e6, f.writeCPU)
	}
	fmt.Printf("%-44s %9.0f sender %.3f, receiver %.3f\n", "loopback TCP, one stream, two processes", tcp/1e6, tcpL.writeCPU, tcpL.readCPU)
	fmt.Printf("%-44s %9.0f sender %.3f, receiver+writer %.3f\n", "loopback TCP into a file (a produce's work)", sockFileL.rate/1e6, sockFileL.writeCPU, sockFileL.readCPU)
	if kib, ok := benchkit.PageReportedKiB(); ok {
		fmt.Printf("this machine hands freed memory back to its host (free page reporting, %.1f GiB so far): each case starts\n"+
			"after it has, so a write to new page cache pays a fault in the host, the yardstick's as the broker's\n", float64(kib)/(1<<20))
	}

	if want("raw") {
		fmt.Printf("\n== raw client (produce: the same batch of %d × 1 KiB, %d requests in flight per connection, on 1 connection\n"+
			"   to 1 partition and on %d connections to %d partitions; fetch: one connection, %d batches per request, one in flight)\n",
			*rawRecs, *rawDepth, *rawConns, *rawConns, *rawFetchN)
		check(createTopic(c.brokerAddr, "raw", 1))
		check(createTopic(c.brokerAddr, "rawN", int32(*rawConns)))
		limit := min(disk, tcp)
		fmt.Printf("%-16s %7s %7s %11s %-30s %11s %-8s %11s %s\n", "case", "GB", "MB/s", "records/s", "ratio of limit (target)", "broker s/GB", "(target)", "client s/GB", "load")
		// Broker CPU per GB against this machine's own: a produce is a
		// socket receive and a buffered write, a fetch a socket send.
		produceCPU, fetchCPU := 1.25*(diskL.writeCPU+tcpL.readCPU), 1.25*tcpL.writeCPU
		settle()
		pr, batchSize := rawProduceRun(c, "raw", 1, val)
		rawRow("produce acks=1", pr, limit, fmt.Sprintf("min(write,tcp) %.2f (≥0.8)", pr.rate()/limit), pr.rate()/limit >= 0.8, produceCPU)
		settle()
		sfL, err := sendfileLimit(dir, filepath.Join(c.logDir, "raw-0", "00000000000000000000.log"), *limitDur, 3)
		check(err)
		settle()
		fr := rawFetchRun(c, "raw", batchSize, pr.records)
		settle()
		prN, _ := rawProduceRun(c, "rawN", *rawConns, val)
		rawRow(fmt.Sprintf("produce %d conns", *rawConns), prN, limit, fmt.Sprintf("min(write,tcp) %.2f (≥0.8)", prN.rate()/limit), prN.rate()/limit >= 0.8, produceCPU)
		socketFileRow(sockFileL, pr, prN)
		rawRow("fetch", fr, tcp, fmt.Sprintf("tcp %.2f (≥0.9)", fr.rate()/tcp), fr.rate()/tcp >= 0.9, fetchCPU)
		sendfileRow(sfL, fr)
	}

	var zk map[string]*franzResult
	if want("franz") {
		fmt.Printf("\n== franz-go → zkafka (produce: %v per case, defaults but acks and codec; acks=1 non-idempotent;\n"+
			"   closed loop with franz-go's 50k-record buffer full, so produce latency is mostly queueing in the client;\n"+
			"   MB/s and broker s/GB count uncompressed values)\n", *caseDur)
		zk = franzCases(c.brokerAddr, "zk", val, bpid, strings.Split(*codecs, ","))
	}
	if want("e2e") {
		fmt.Printf("\n== end to end at %.0f MB/s, 1 partition, producer linger 0 (%v measured after 0.5 s);\n"+
			"   contended: %d busy-looping threads in another process during the case; ack: produce acknowledgement\n",
			*e2eRate/1e6, *e2eDur, *e2eBurn)
		fmt.Printf("%-22s %10s %9s %9s %9s %9s %-10s %9s %9s %s\n", "acks", "MB/s sent", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "(p99 target)", "ack p99", "ack max", "load")
		for _, contended := range []bool{false, true} {
			for _, acksAll := range []bool{false, true} {
				e2eRow(c.brokerAddr, dir, acksAll, contended, val)
			}
		}
	}
	c.stop()

	if *kfakeOn && want("kfake") {
		p, addr, err := startKfake(dir, *kProfile)
		check(err)
		benchkit.AtExit(func() { p.Stop(5 * time.Second) })
		fmt.Printf("\n== franz-go → kfake (in-memory, its own process; same client settings)\n")
		kf := franzCases(addr, "kf", val, p.Pid(), []string{"none"})
		p.Stop(10 * time.Second)
		if zk != nil {
			fmt.Printf("\n== zkafka / kfake, franz-go throughput (target ≥ 2)\n")
			for _, k := range sortedKeys(kf) {
				if z, ok := zk[k]; ok {
					r := z.recPerSec() / kf[k].recPerSec()
					fmt.Printf("%-34s %6.2f %s %s\n", k, r, met(r >= 2), loadAvg())
				}
			}
		}
	}
	fmt.Printf("\nkafkabench took %v\n", time.Since(start).Round(time.Second))
	benchkit.Exit(0)
}

// e2eRow runs one end-to-end case and prints its row; contended runs it
// beside a process spinning -e2e-burn threads.
func e2eRow(addr, dir string, acksAll, contended bool, val []byte) {
	name := acksName(acksAll)
	target := 2 * time.Millisecond
	if contended {
		if *e2eBurn <= 0 {
			return
		}
		name += " contended"
		target = 20 * time.Millisecond
	}
	topic := fmt.Sprintf("e2e-%s-%v", acksName(acksAll), contended)
	check(createTopic(addr, topic, 1))
	settle()
	if contended {
		stop, err := startBurner(dir, *e2eBurn)
		check(err)
		defer stop()
	}
	r, achieved, err := endToEnd(addr, topic, acksAll, val, *e2eRate, *e2eDur)
	if err != nil {
		fmt.Printf("%-22s error: %v\n", name, err)
		return
	}
	p99 := r.lat.Percentile(99)
	fmt.Printf("%-22s %10.1f %9s %9s %9s %9s %-12s %9s %9s %s\n", name, achieved/1e6, benchkit.Ms(r.lat.Percentile(50)),
		benchkit.Ms(p99), benchkit.Ms(r.lat.Percentile(99.9)), benchkit.Ms(r.lat.Percentile(100)),
		fmt.Sprintf("≤%v %s", target, met(p99 <= target)), benchkit.Ms(r.ack.Percentile(99)), benchkit.Ms(r.ack.Percentile(100)), loadAvg())
}

func (r rawResult) rate() float64 { return float64(r.bytes) / r.elapsed.Seconds() }

func rawRow(name string, r rawResult, limit float64, ratio string, ok bool, cpuTarget float64) {
	gb := float64(r.bytes) / 1e9
	bs := r.brkCPU.Seconds() / gb
	fmt.Printf("%-16s %7.2f %7.0f %11.0f %-30s %11.3f %-8s %11.3f %s\n", name, gb, r.rate()/1e6, float64(r.records)/r.elapsed.Seconds(),
		ratio+" "+met(ok), bs, fmt.Sprintf("≤%.2f %s", cpuTarget, met(bs <= cpuTarget)), r.cliCPU.Seconds()/gb, loadAvg())
}

// sendfileRow prints the sendfile limit and the fetch against it.
func sendfileRow(l limit, fr rawResult) {
	bs := fr.brkCPU.Seconds() / (float64(fr.bytes) / 1e9)
	fmt.Printf("  sendfile limit: the fetched segment by sendfile(2), %d MiB per call, streamed to a reader process over loopback:\n"+
		"  %.0f MB/s, sender %.3f s/GB, reader %.3f s/GB; fetch / sendfile: rate %.2f, broker CPU %.2f × its sender, client CPU %.2f × its reader;\n"+
		"  fetch waited for first bytes %.0f%% of its time, %v per request\n",
		sendfileChunk>>20, l.rate/1e6, l.writeCPU, l.readCPU, fr.rate()/l.rate, bs/l.writeCPU, fr.cliCPU.Seconds()/(float64(fr.bytes)/1e9)/l.readCPU,
		100*fr.firstByte.Seconds()/fr.elapsed.Seconds(), (fr.firstByte / time.Duration(max(fr.requests, 1))).Round(time.Microsecond))
}

// socketFileRow compares the raw produce cases with the socket-to-file
// limit: the machine doing only a produce's receive and write.
func socketFileRow(l limit, prs ...rawResult) {
	fmt.Printf("  socket-to-file limit: one loopback stream read in %d KiB reads, each written to a file: %.0f MB/s, receiver+writer %.3f s/GB;\n  produce / it:",
		*rawRecs*recSize>>10, l.rate/1e6, l.readCPU)
	for i, pr := range prs {
		bs := pr.brkCPU.Seconds() / (float64(pr.bytes) / 1e9)
		fmt.Printf("%s rate %.2f, broker CPU %.2f × its receiver+writer", map[bool]string{true: ";", false: ""}[i > 0], pr.rate()/l.rate, bs/l.readCPU)
	}
	fmt.Println()
}

// rawProduceRun runs rawProduce with acks=1 on conns connections, with the
// broker's and the client's CPU.
func rawProduceRun(c *cluster, topic string, conns int, val []byte) (rawResult, int) {
	cpu0, _ := benchkit.CPUTime(c.broker.Pid())
	cli0 := benchkit.SelfCPU()
	pr, batchSize, err := rawProduce(c.brokerAddr, topic, conns, 1, *rawRecs, val, *rawDepth, *rawDur, *rawMax)
	check(err)
	cpu1, _ := benchkit.CPUTime(c.broker.Pid())
	pr.brkCPU, pr.cliCPU = cpu1-cpu0, benchkit.SelfCPU()-cli0
	return pr, batchSize
}

// rawFetchRun reads back what rawProduceRun wrote to partition 0.
func rawFetchRun(c *cluster, topic string, batchSize int, records int64) rawResult {
	cpu1, _ := benchkit.CPUTime(c.broker.Pid())
	cli1 := benchkit.SelfCPU()
	fr, err := rawFetch(c.brokerAddr, topic, batchSize, records, *rawFetchN)
	check(err)
	cpu2, _ := benchkit.CPUTime(c.broker.Pid())
	fr.brkCPU, fr.cliCPU = cpu2-cpu1, benchkit.SelfCPU()-cli1
	if fr.records != records {
		check(fmt.Errorf("raw fetch read %d records, produced %d", fr.records, records))
	}
	return fr
}

// franzCases runs the produce matrix and then consumes each topic; keys
// are "produce p=N acks=X codec" and "consume p=N codec".
func franzCases(addr, prefix string, val []byte, pid int, codecList []string) map[string]*franzResult {
	out := map[string]*franzResult{}
	var partitions []int
	for _, s := range strings.Split(*partsArg, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		partitions = append(partitions, n)
	}
	fmt.Printf("%-34s %11s %9s %9s %9s %12s %12s\n", "case", "records/s", "MB/s", "p50 ms", "p99 ms", "broker s/GB", "client s/GB")
	type produced struct {
		topic string
		n     int64
	}
	var toConsume []produced
	for _, parts := range partitions {
		for _, acksAll := range []bool{false, true} {
			for _, codec := range codecList {
				topic := fmt.Sprintf("%s-p%d-%s-%s", prefix, parts, acksName(acksAll), codec)
				check(createTopic(addr, topic, int32(parts)))
				settle()
				cpu0, _ := benchkit.CPUTime(pid)
				cli0 := benchkit.SelfCPU()
				r, err := franzProduce(addr, topic, acksAll, codec, val, *caseDur, *caseMax)
				cpu1, _ := benchkit.CPUTime(pid)
				cli1 := benchkit.SelfCPU()
				name := fmt.Sprintf("produce p=%d acks=%s %s", parts, acksName(acksAll), codec)
				if err != nil {
					fmt.Printf("%-34s error: %v\n", name, err)
					continue
				}
				r.brkCPU, r.cliCPU = cpu1-cpu0, cli1-cli0
				out[name] = r
				gb := float64(r.bytes) / 1e9
				fmt.Printf("%-34s %11.0f %9.1f %9s %9s %12.2f %12.2f\n", name, r.recPerSec(), r.mbPerSec(),
					benchkit.Ms(r.lat.Percentile(50)), benchkit.Ms(r.lat.Percentile(99)), r.brkCPU.Seconds()/gb, r.cliCPU.Seconds()/gb)
				if acksAll {
					toConsume = append(toConsume, produced{topic, r.records})
				}
			}
		}
	}
	for _, p := range toConsume {
		cpu0, _ := benchkit.CPUTime(pid)
		cli0 := benchkit.SelfCPU()
		r, err := franzConsume(addr, p.topic, p.n, 60*time.Second)
		cpu1, _ := benchkit.CPUTime(pid)
		cli := benchkit.SelfCPU() - cli0
		parts, codec := topicParts(p.topic)
		name := fmt.Sprintf("consume p=%s %s", parts, codec)
		if err != nil {
			fmt.Printf("%-34s error: %v\n", name, err)
			continue
		}
		r.brkCPU = cpu1 - cpu0
		out[name] = r
		// The consumer's own CPU (this process: franz-go reading, CRC
		// checking and decoding) and the share of a core it kept busy:
		// near 1, the client is what bounds the case.
		fmt.Printf("%-34s %11.0f %9.1f %9s %9s %12.2f  client %.2f s/GB, %.2f cores\n", name, r.recPerSec(), r.mbPerSec(), "", "",
			r.brkCPU.Seconds()/(float64(r.bytes)/1e9), cli.Seconds()/(float64(r.bytes)/1e9), cli.Seconds()/r.elapsed.Seconds())
	}
	return out
}

func topicParts(topic string) (string, string) {
	f := strings.Split(topic, "-")
	return strings.TrimPrefix(f[1], "p"), f[len(f)-1]
}

func acksName(all bool) string {
	if all {
		return "all"
	}
	return "1"
}

func sortedKeys(m map[string]*franzResult) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	// produce before consume, then by name.
	slices.SortFunc(ks, func(a, b string) int {
		if (a[0] == 'p') != (b[0] == 'p') {
			if a[0] == 'p' {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return ks
}

// settle writes back dirty pages left by the previous case and, on a
// virtual machine that hands freed memory back to its host, waits until it
// has (benchkit.AwaitPagesReported), so that each case starts from the
// same state: no case pays for another's writeback, and every write to new
// page cache, the yardstick's and the broker's alike, meets memory the
// host must fault in again, as a growing log does there.
func settle() {
	syscall.Sync()
	benchkit.AwaitPagesReported(15 * time.Second)
	time.Sleep(100 * time.Millisecond)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkabench:", err)
		benchkit.Exit(1)
	}
}
