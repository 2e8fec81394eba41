package quorum

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// writeEnvironment is envi. The keys are Apache ZooKeeper's (EnvCommand:
// Environment.list), java.* included, so that tools find them; a Go
// process has no JVM, so those say what the Go equivalent is: the Go
// version, the binary and its directory, the runtime's memory in MB.
func writeEnvironment(w io.Writer) {
	io.WriteString(w, "Environment:\n")
	for _, kv := range environment() {
		fmt.Fprintf(w, "%s=%s\n", kv[0], kv[1])
	}
}

// environment is envi's keys and values, in its order (also the
// AdminServer's environment command).
func environment() [][2]string {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	userName, home := "", ""
	if u, err := user.Current(); err == nil {
		userName, home = u.Username, u.HomeDir
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const mb = 1 << 20
	total := ms.Sys / mb
	free := (ms.Sys - ms.HeapAlloc) / mb
	max := total
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < 1<<62 {
		max = uint64(limit) / mb
	}
	return [][2]string{
		{"zookeeper.version", zkVersion},
		{"host.name", host},
		{"java.version", runtime.Version()},
		{"java.vendor", "Go (" + runtime.Compiler + ")"},
		{"java.home", filepath.Dir(exe)},
		{"java.class.path", exe},
		{"java.library.path", ""},
		{"java.io.tmpdir", os.TempDir()},
		{"java.compiler", "<NA>"},
		{"os.name", javaOSName()},
		{"os.arch", javaArch()},
		{"os.version", osVersion()},
		{"user.name", userName},
		{"user.home", home},
		{"user.dir", wd},
		{"os.memory.free", fmt.Sprintf("%dMB", free)},
		{"os.memory.max", fmt.Sprintf("%dMB", max)},
		{"os.memory.total", fmt.Sprintf("%dMB", total)},
	}
}

// javaOSName is the os.name Java reports for runtime.GOOS.
func javaOSName() string {
	switch runtime.GOOS {
	case "linux":
		return "Linux"
	case "darwin":
		return "Mac OS X"
	case "freebsd":
		return "FreeBSD"
	}
	return runtime.GOOS
}

// javaArch is the os.arch Java reports for runtime.GOARCH.
func javaArch() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	}
	return runtime.GOARCH
}

// osVersion is the kernel release (uname -r), as Java's os.version.
func osVersion() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
