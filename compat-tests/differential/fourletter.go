package differential

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FourLetterWords are the words Apache ZooKeeper 3.8 and zkafka both
// answer, for Config.FourLetterWords. The servers must whitelist them.
var FourLetterWords = []string{"ruok", "isro", "srvr", "stat", "mntr", "conf", "cons", "envi", "dirs", "wchs", "wchc", "wchp", "dump"}

// fourLetterRecords asks the server every four-letter word, one connection
// each, and renders each answer as one Record, normalized by
// NormalizeFourLetterWord with this run's session labels.
func (r *runner) fourLetterRecords(first int) ([]Record, error) {
	words := r.cfg.FourLetterWords
	addr := strings.Split(r.addr, ",")[0]
	var out []Record
	for k, w := range words {
		text, err := askFourLetterWord(addr, w, r.cfg.opTimeout())
		if err != nil {
			return out, fmt.Errorf("4lw %s: %w", w, err)
		}
		if r.cfg.AlterFourLetterWord != nil {
			text = r.cfg.AlterFourLetterWord(w, text)
		}
		out = append(out, Record{Index: first + k, Op: "4lw " + w, Lines: NormalizeFourLetterWord(w, text, r.sessionLabel)})
	}
	return out, nil
}

// askFourLetterWord sends word and reads the answer up to the server's close.
func askFourLetterWord(addr, word string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 4<<20))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// sessionLabel renders a session id as its slot label ("s2g1"); 0 stays
// "0x0" (a connection without a session).
func (r *runner) sessionLabel(id int64) string {
	if id == 0 {
		return "0x0"
	}
	if l, ok := r.owners[id]; ok {
		return l
	}
	return "unknown-session"
}

// NormalizeFourLetterWord turns one four-letter word's answer into lines
// that two servers in the same state must render identically. The rule for
// each word, and each key, is in the package doc ("Four-letter words").
// label renders a session id.
func NormalizeFourLetterWord(word, text string, label func(int64) string) []string {
	switch word {
	case "srvr", "stat":
		return normStat(text, label)
	case "mntr":
		return normMntr(text)
	case "conf":
		return normConf(text)
	case "cons":
		return normConnections(splitLines(text), label, false)
	case "envi":
		return normEnvi(text)
	case "dirs":
		return replaceAll(splitLines(text), reNumber, "<n>")
	case "wchc":
		return normBlocks(text, label, true)
	case "wchp":
		return normBlocks(text, label, false)
	case "dump":
		return normDump(text, label)
	}
	// ruok, isro, wchs: every byte is compared.
	return splitLines(text)
}

// splitLines keeps trailing empty lines, so "x\n" and "x" differ.
func splitLines(text string) []string { return strings.Split(text, "\n") }

var (
	reNumber = regexp.MustCompile(`\d+`)
	reInt    = regexp.MustCompile(`^-?\d+$`)
	// Java's Double.toString of a value rounded to 4 places: 2.0,
	// 0.3333, or 9.0E-4 below 0.001.
	reJDouble = regexp.MustCompile(`^(-?\d+\.(0|\d{0,3}[1-9])|[1-9]\.[0-9]+E-[1-4])$`)
	reHex     = regexp.MustCompile(`^0x[0-9a-f]+$`)
	reVersion = regexp.MustCompile(`^3\.8\.\d+-\S+, built on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$`)
	reSession = regexp.MustCompile(`0x[0-9a-f]+`)
	reAddr    = regexp.MustCompile(`^/127\.0\.0\.1:\d+$`)
)

func replaceAll(lines []string, re *regexp.Regexp, with string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = re.ReplaceAllString(l, with)
	}
	return out
}

// shape replaces a value by the name of its class when it matches it, and
// shows it marked as malformed otherwise.
func shape(v string, re *regexp.Regexp, class string) string {
	if re.MatchString(v) {
		return class
	}
	return "malformed(" + class + "): " + v
}

func version(v string) string { return shape(v, reVersion, "<3.8 version>") }

// labelHex replaces a hex session id by its label.
func labelHex(hex string, label func(int64) string) string {
	id, err := strconv.ParseUint(strings.TrimPrefix(hex, "0x"), 16, 64)
	if err != nil {
		return "malformed(session): " + hex
	}
	return label(int64(id))
}

// normStat: srvr and stat, "Key: value" lines; stat adds the brief
// connection list after "Clients:".
func normStat(text string, label func(int64) string) []string {
	lines := splitLines(text)
	var out, clients []string
	for _, l := range lines {
		if strings.HasPrefix(l, " /") {
			clients = append(clients, l)
			continue
		}
		if clients != nil {
			out = append(out, normConnections(clients, label, true)...)
			clients = nil
		}
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			out = append(out, l)
			continue
		}
		switch k {
		case "Zookeeper version":
			v = version(v)
		case "Latency min/avg/max":
			v = latencyShape(v)
		case "Received", "Sent":
			v = shape(v, reInt, "<n>")
		case "Zxid":
			v = shape(v, reHex, "<zxid>")
		case "Proposal sizes last/min/max": // a leader's
			v = shape(v, regexp.MustCompile(`^-?\d+/-?\d+/-?\d+$`), "<last>/<min>/<max>")
		}
		out = append(out, k+": "+v)
	}
	if clients != nil {
		out = append(out, normConnections(clients, label, true)...)
	}
	return out
}

// latencyShape checks "min/avg/max": whole ms and a Java double.
func latencyShape(v string) string {
	parts := strings.Split(v, "/")
	if len(parts) == 3 && reInt.MatchString(parts[0]) && reJDouble.MatchString(parts[1]) && reInt.MatchString(parts[2]) {
		return "<min>/<avg>/<max>"
	}
	return "malformed(<min>/<avg>/<max>): " + v
}

// reConn is one connection line of cons and stat.
var reConn = regexp.MustCompile(`^ (/[0-9.]+:\d+)\[([0-9a-f]+)\]\((.*)\)$`)

// consExact are the cons fields compared as values; the others are
// counters, times or latencies, compared by shape.
var consExact = map[string]bool{"queued": true, "to": true}

// normConnections renders connection lines with the port, counters, times
// and latencies replaced by their shape and the session by its label,
// sorted (the servers list them in hash order). Other lines (the blank lines
// that end cons) stay where they are, after the sorted connections.
func normConnections(lines []string, label func(int64) string, brief bool) []string {
	var conns, rest []string
	for _, l := range lines {
		m := reConn.FindStringSubmatch(l)
		if m == nil {
			rest = append(rest, l)
			continue
		}
		var b strings.Builder
		b.WriteString(" " + shape(m[1], reAddr, "/127.0.0.1:<port>") + "[" + m[2] + "](")
		for i, f := range strings.Split(m[3], ",") {
			k, v, _ := strings.Cut(f, "=")
			switch {
			case k == "sid":
				v = labelHex(v, label)
			case k == "lcxid":
				// Absent when the last request was a ping (cxid -2):
				// timing, so not compared, present or not.
				continue
			case k == "lop":
				v = shape(v, regexp.MustCompile(`^[A-Z]{2,6}[0-9]?$`), "<op>")
			case k == "lzxid":
				v = shape(v, reHex, "<zxid>")
			case !consExact[k]:
				v = shape(v, reInt, "<n>")
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(k + "=" + v)
		}
		b.WriteString(")")
		conns = append(conns, b.String())
	}
	slices.Sort(conns)
	return append(conns, rest...)
}

// mntrExact are the mntr keys whose values follow from the server's state
// and the operations of the run, so they are compared as values.
var mntrExact = map[string]bool{
	"zk_server_state": true, "zk_ephemerals_count": true, "zk_num_alive_connections": true,
	"zk_outstanding_requests": true, "zk_znode_count": true, "zk_global_sessions": true,
	"zk_local_sessions": true, "zk_watch_count": true, "zk_approximate_data_size": true,
	"zk_connection_drop_probability": true, "zk_outstanding_tls_handshake": true,
	"zk_non_mtls_remote_conn_count": true, "zk_non_mtls_local_conn_count": true,
	"zk_peer_state": true, "zk_quorum_size": true, "zk_synced_followers": true, "zk_synced_observers": true,
	"zk_learners": true, "zk_synced_non_voting_followers": true, "zk_pending_syncs": true,
}

// reNamespace matches the per-namespace summary sets
// (zk_cnt_<top-level znode>_read_per_namespace ...): their key set follows
// from the paths read and written, so it is compared; cnt and sum are
// compared as values too (bytes of paths and data, deterministic).
var reNamespace = regexp.MustCompile(`^zk_(avg|min|max|cnt|sum)_.+_(read|write)_per_namespace$`)

// normMntr: "key\tvalue" lines, compared as a sorted key set; values by
// class (see mntrExact and the package doc).
func normMntr(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "\t")
		if !ok {
			out = append(out, "malformed line: "+l)
			continue
		}
		switch m := reNamespace.FindStringSubmatch(k); {
		case k == "zk_version":
			v = version(v)
		case mntrExact[k]:
		case m != nil && (m[1] == "cnt" || m[1] == "sum"):
		case strings.HasPrefix(k, "zk_avg_") || m != nil && m[1] == "avg":
			v = shape(v, reJDouble, "<double>")
		default:
			v = shape(v, reInt, "<n>")
		}
		out = append(out, k+"\t"+v)
	}
	slices.Sort(out)
	if !strings.HasSuffix(text, "\n") {
		out = append(out, "(no final newline)")
	}
	return out
}

// normConf: "key=value" lines in the server's order; the port, the
// directories (under the test's temporary directory) and their sizes are
// shapes.
func normConf(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		k, v, ok := strings.Cut(l, "=")
		if ok {
			switch k {
			case "clientPort", "electionPort", "quorumPort":
				v = shape(v, reInt, "<port>")
			case "dataDir", "dataLogDir":
				// Apache ZooKeeper shows its version-2 subdirectory.
				v = "<dir>"
			case "dataDirSize", "dataLogSize":
				v = shape(v, reInt, "<n>")
			}
			if strings.HasPrefix(k, "server.") {
				v = reNumber.ReplaceAllString(v, "<n>")
			}
			l = k + "=" + v
		}
		out = append(out, l)
	}
	return out
}

// enviExact are the envi keys compared as values (same machine, same user);
// the others (JVM paths and versions, host name, memory, working directory)
// are compared by key only.
var enviExact = map[string]bool{"os.name": true, "os.arch": true, "os.version": true, "user.name": true, "user.home": true, "java.io.tmpdir": true}

func normEnvi(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		k, v, ok := strings.Cut(l, "=")
		if ok {
			switch {
			case k == "zookeeper.version":
				v = version(v)
			case strings.HasPrefix(k, "os.memory."):
				v = shape(v, regexp.MustCompile(`^\d+MB$`), "<n>MB")
			case !enviExact[k]:
				v = "<value>"
			}
			l = k + "=" + v
		}
		out = append(out, l)
	}
	return out
}

// normBlocks: wchc (a session, then its watched paths indented by a tab)
// and wchp (a path, then the sessions watching it). Blocks and their
// entries are sorted; the trailing blank lines are kept.
func normBlocks(text string, label func(int64) string, bySession bool) []string {
	lines := splitLines(text)
	blocks := map[string][]string{}
	var heads, rest []string
	head := ""
	for _, l := range lines {
		switch {
		case l == "":
			rest = append(rest, l)
		case strings.HasPrefix(l, "\t"):
			e := l[1:]
			if !bySession {
				e = labelHex(e, label)
			}
			blocks[head] = append(blocks[head], "\t"+e)
		default:
			head = l
			if bySession {
				head = labelHex(l, label)
			}
			heads = append(heads, head)
		}
	}
	slices.Sort(heads)
	var out []string
	for _, h := range heads {
		entries := blocks[h]
		slices.Sort(entries)
		out = append(out, h)
		out = append(out, entries...)
	}
	return append(out, rest...)
}

var (
	reSets   = regexp.MustCompile(`^(Session|Connections) Sets \((\d+)\)/\((\d+)\):$`)
	reExpire = regexp.MustCompile(`^\d+ expire at .+:$`)
	reDumpIP = regexp.MustCompile(`^\tip: (/[0-9.]+:\d+) sessionId: (0x[0-9a-f]+)$`)
	reGlobal = regexp.MustCompile(`^(0x[0-9a-f]+)\t(\d+ms)$`)
)

// normDump: the session and connection expiry buckets depend on timing, so
// each bucket header goes and its members are listed sorted under the
// set's header, whose bucket count is a shape and member count a value;
// ephemerals are grouped by session label and sorted.
func normDump(text string, label func(int64) string) []string {
	var out, group []string
	flush := func() {
		slices.Sort(group)
		out = append(out, group...)
		group = nil
	}
	inEphemerals := false
	for _, l := range splitLines(text) {
		switch m := reSets.FindStringSubmatch(l); {
		case m != nil:
			flush()
			out = append(out, fmt.Sprintf("%s Sets (<n>)/(%s):", m[1], m[3]))
			inEphemerals = false
		case reExpire.MatchString(l):
		case reDumpIP.MatchString(l):
			m := reDumpIP.FindStringSubmatch(l)
			group = append(group, "\tip: "+shape(m[1], reAddr, "/127.0.0.1:<port>")+" sessionId: "+labelHex(m[2], label))
		case strings.HasPrefix(l, "\t") && !inEphemerals:
			group = append(group, "\t"+reSession.ReplaceAllStringFunc(l[1:], func(h string) string { return labelHex(h, label) }))
		case reGlobal.MatchString(l):
			// A learner's "Global Sessions(n):" list: id, then timeout.
			m := reGlobal.FindStringSubmatch(l)
			group = append(group, labelHex(m[1], label)+"\t"+m[2])
		case strings.HasPrefix(l, "Sessions with Ephemerals"):
			flush()
			out = append(out, l)
			inEphemerals = true
		case inEphemerals && strings.HasSuffix(l, ":") && reHex.MatchString(strings.TrimSuffix(l, ":")):
			group = append(group, labelHex(strings.TrimSuffix(l, ":"), label)+":")
		case inEphemerals && strings.HasPrefix(l, "\t"):
			group[len(group)-1] += " " + l[1:]
		default:
			flush()
			inEphemerals = inEphemerals && l != "Connections dump:"
			out = append(out, l)
		}
	}
	flush()
	return sortEphemeralLines(out)
}

// sortEphemeralLines sorts the paths within each "label: p1 p2" line.
func sortEphemeralLines(lines []string) []string {
	for i, l := range lines {
		if h, rest, ok := strings.Cut(l, ": "); ok && !strings.ContainsAny(h, " \t") && strings.HasPrefix(rest, "/") {
			ps := strings.Fields(rest)
			slices.Sort(ps)
			lines[i] = h + ": " + strings.Join(ps, " ")
		}
	}
	return lines
}
