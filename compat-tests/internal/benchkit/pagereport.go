package benchkit

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// reportedPath is the kernel's count of the free memory it has given back
// to its hypervisor (virtio-balloon free page reporting), in KiB.
const reportedPath = "/sys/module/page_reporting/parameters/reported_kib"

// pageReportingDelay is how long the kernel waits after a free before it
// reports the freed blocks (PAGE_REPORTING_DELAY, 2 s), with a margin.
const pageReportingDelay = 2500 * time.Millisecond

// PageReportedKiB returns how much freed memory this machine has given
// back to its host so far, and whether it does that at all.
//
// On such a virtual machine a page the guest frees is soon handed back,
// and the next write to it faults in the host: a buffered write to new
// page cache then runs at a fraction of memory speed (seen here: 300–480
// MB/s against 3–4 GB/s over pages freed a moment before), and how fast
// a run writes depends on how long ago the memory it gets was freed.
func PageReportedKiB() (int64, bool) {
	b, err := os.ReadFile(reportedPath)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// AwaitPagesReported waits, up to limit, until the kernel has handed back
// the memory freed so far (its count stops moving for longer than the
// reporting delay), so that every measured run starts from the same state:
// the free memory the host's, as a growing log finds it. It returns at
// once on a machine without free page reporting.
func AwaitPagesReported(limit time.Duration) {
	last, ok := PageReportedKiB()
	if !ok {
		return
	}
	deadline := time.Now().Add(limit)
	still := time.Now()
	for time.Now().Before(deadline) && time.Since(still) < pageReportingDelay {
		time.Sleep(100 * time.Millisecond)
		if n, _ := PageReportedKiB(); n != last {
			last, still = n, time.Now()
		}
	}
}
