package differential

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of an operation.
type Kind int

// The operation kinds.
const (
	OpCreate Kind = iota
	OpDelete
	OpSet
	OpExists
	OpGet
	OpChildren
	OpGetACL
	OpSetACL
	OpMulti
	OpSync
	OpAddAuth
	OpReopen // close the slot's session, then open a new one in the slot
	OpCheck  // only inside a multi
)

var kindNames = [...]string{"create", "delete", "set", "exists", "get", "children", "getACL", "setACL", "multi", "sync", "addAuth", "reopen", "check"}

func (k Kind) String() string { return kindNames[k] }

// writes reports whether an operation of this kind can change the tree and
// so fire watches.
func (k Kind) writes() bool {
	switch k {
	case OpCreate, OpDelete, OpSet, OpSetACL, OpMulti, OpReopen:
		return true
	}
	return false
}

// Create modes, as the go client numbers them, plus container.
const (
	ModePersistent   = 0
	ModeEphemeral    = 1
	ModeSequential   = 2
	ModeEphSeq       = 3
	ModeContainer    = 4
	ModeTTL          = 5
	ModeTTLSeq       = 6
	numSessionsSlots = 4
)

// ACL sets an operation can name; see aclSet in runner.go.
const (
	ACLWorldAll = iota
	ACLWorldRead
	ACLAliceAll
	ACLAliceAdminWorldRead
	ACLAuthAll
	ACLEmpty
	ACLWorldCreateOnly
	numACLs
)

var aclNames = [...]string{"world:all", "world:read", "digest(alice):all", "digest(alice):admin+world:read", "auth:all", "empty", "world:create+read"}

// Credentials an AddAuth operation can add.
var credentials = [...]string{"alice:secret", "alice:wrong", "bob:pw"}

// Op is one operation. Path is used unless Ref >= 0 and op #Ref returned a
// path (a create), in which case that path is used.
type Op struct {
	Kind    Kind
	Session int // slot 0..NumSessions-1
	Path    string
	Ref     int // index of an earlier create op, or -1
	Data    []byte
	Mode    int   // create mode
	TTL     int64 // ms, for ModeTTL and ModeTTLSeq
	Version int32
	ACL     int // ACL set, for create and setACL
	Watch   bool
	Auth    int  // credentials index, for OpAddAuth
	Sub     []Op // the ops of a multi
}

// NumSessions is the number of session slots a run uses.
const NumSessions = numSessionsSlots

// String is a readable one-line description of the operation.
func (o Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "s%d %s", o.Session, o.Kind)
	o.args(&b)
	if o.Kind == OpMulti {
		b.WriteString(" [")
		for i, s := range o.Sub {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(s.Kind.String())
			s.args(&b)
		}
		b.WriteString("]")
	}
	return b.String()
}

func (o Op) args(b *strings.Builder) {
	switch o.Kind {
	case OpMulti, OpReopen:
		return
	case OpAddAuth:
		fmt.Fprintf(b, " digest %s", credentials[o.Auth])
		return
	}
	fmt.Fprintf(b, " %s", pathString(o.Path))
	if o.Ref >= 0 {
		fmt.Fprintf(b, " (or path of #%d)", o.Ref)
	}
	switch o.Kind {
	case OpCreate:
		fmt.Fprintf(b, " mode=%s", modeName(o.Mode))
		if o.Mode == ModeTTL || o.Mode == ModeTTLSeq {
			fmt.Fprintf(b, " ttl=%d", o.TTL)
		}
		fmt.Fprintf(b, " data=%s acl=%s", dataString(o.Data), aclNames[o.ACL])
	case OpSet:
		fmt.Fprintf(b, " data=%s version=%d", dataString(o.Data), o.Version)
	case OpDelete, OpCheck:
		fmt.Fprintf(b, " version=%d", o.Version)
	case OpSetACL:
		fmt.Fprintf(b, " acl=%s version=%d", aclNames[o.ACL], o.Version)
	case OpExists, OpGet, OpChildren:
		if o.Watch {
			b.WriteString(" watch")
		}
	}
}

func modeName(m int) string {
	switch m {
	case ModePersistent:
		return "persistent"
	case ModeEphemeral:
		return "ephemeral"
	case ModeSequential:
		return "sequential"
	case ModeEphSeq:
		return "ephemeral-sequential"
	case ModeContainer:
		return "container"
	case ModeTTL:
		return "ttl"
	case ModeTTLSeq:
		return "ttl-sequential"
	}
	return fmt.Sprintf("mode(%d)", m)
}

// pathString quotes a path that is empty or has characters that would not
// show.
func pathString(p string) string {
	if p == "" || !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsGraphic(r) || r == ' ' }) {
		return strconv.Quote(p)
	}
	return p
}

func dataString(d []byte) string {
	if d == nil {
		return "null"
	}
	return fmt.Sprintf("%q", d)
}

// Root is the znode under which generated operations work; Generate's first
// operation creates it.
const Root = "/d"

var names = []string{"a", "b", "c"}

// invalidPaths are sent only inside multi, where the go client does not
// validate them.
var invalidPaths = []string{"/d//a", "/d/a/", "d/a", "/d/./a", "/d/../a", "/d/a\x00b", "", "/d/\u0001x", "/d/\xed\xa0\x80"}

// specialPaths are server-owned znodes and the root.
var specialPaths = []string{"/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota", "/zookeeper/x"}

// gen holds the generator state: only the random source and the indexes of
// earlier creates. It never looks at server replies.
type gen struct {
	r       *rand.Rand
	creates []int // indexes of create ops
	n       int   // index of the op being generated
}

// Generate returns n operations drawn from seed. The first creates Root.
func Generate(seed uint64, n int) []Op {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	ops := make([]Op, 0, n)
	ops = append(ops, Op{Kind: OpCreate, Path: Root, Ref: -1, Data: []byte("root"), ACL: ACLWorldAll})
	for g.n = 1; g.n < n; g.n++ {
		op := g.op()
		if op.Kind == OpCreate {
			g.creates = append(g.creates, g.n)
		}
		ops = append(ops, op)
	}
	return ops
}

func (g *gen) pct(p int) bool { return g.r.IntN(100) < p }

// path is a random path under Root of depth 1..3 over a tiny alphabet.
func (g *gen) path() string {
	depth := 1 + g.r.IntN(3)
	if g.pct(40) {
		depth = 1 + g.r.IntN(2)
	}
	p := Root
	for range depth {
		p += "/" + names[g.r.IntN(len(names))]
	}
	return p
}

// target is a path, sometimes a special one, with an optional reference to
// an earlier create.
func (g *gen) target(special bool) (string, int) {
	if special && g.pct(3) {
		return specialPaths[g.r.IntN(len(specialPaths))], -1
	}
	ref := -1
	if len(g.creates) > 0 && g.pct(30) {
		// Prefer recent creates.
		k := len(g.creates) - 1 - g.r.IntN(min(len(g.creates), 40))
		ref = g.creates[k]
	}
	return g.path(), ref
}

func (g *gen) data() []byte {
	switch {
	case g.pct(8):
		return nil
	case g.pct(8):
		return []byte{}
	}
	return fmt.Appendf(nil, "v%d", g.n)
}

func (g *gen) version() int32 {
	if g.pct(60) {
		return -1
	}
	return int32(g.r.IntN(4))
}

func (g *gen) acl() int {
	switch x := g.r.IntN(100); {
	case x < 72:
		return ACLWorldAll
	case x < 78:
		return ACLWorldRead
	case x < 84:
		return ACLAliceAll
	case x < 89:
		return ACLAliceAdminWorldRead
	case x < 94:
		return ACLAuthAll
	case x < 96:
		return ACLEmpty
	default:
		return ACLWorldCreateOnly
	}
}

func (g *gen) create() Op {
	op := Op{Kind: OpCreate, Ref: -1, Data: g.data(), ACL: g.acl()}
	op.Path, _ = g.target(true)
	switch x := g.r.IntN(100); {
	case x < 40:
		op.Mode = ModePersistent
	case x < 55:
		op.Mode = ModeEphemeral
	case x < 67:
		op.Mode = ModeSequential
	case x < 75:
		op.Mode = ModeEphSeq
	case x < 86:
		op.Mode = ModeContainer
	case x < 95:
		op.Mode = ModeTTL
	default:
		op.Mode = ModeTTLSeq
	}
	if op.Mode == ModeTTL || op.Mode == ModeTTLSeq {
		// Long enough never to expire during a run; sometimes invalid.
		switch x := g.r.IntN(10); {
		case x == 0:
			op.TTL = 0
		case x == 1:
			op.TTL = 1 << 41 // over EphemeralType.TTL's maximum
		default:
			op.TTL = 3_600_000
		}
	}
	if (op.Mode == ModeSequential || op.Mode == ModeEphSeq) && g.pct(20) {
		op.Path += "/" // the name is the counter alone
	}
	return op
}

func (g *gen) op() Op {
	s := g.r.IntN(NumSessions)
	var op Op
	switch x := g.r.IntN(1000); {
	case x < 220:
		op = g.create()
	case x < 330:
		op = Op{Kind: OpDelete, Version: g.version()}
		op.Path, op.Ref = g.target(true)
	case x < 450:
		op = Op{Kind: OpSet, Data: g.data(), Version: g.version()}
		op.Path, op.Ref = g.target(true)
	case x < 550:
		op = Op{Kind: OpExists, Watch: g.pct(50)}
		op.Path, op.Ref = g.target(true)
	case x < 660:
		op = Op{Kind: OpGet, Watch: g.pct(50)}
		op.Path, op.Ref = g.target(true)
	case x < 770:
		op = Op{Kind: OpChildren, Watch: g.pct(50)}
		op.Path, op.Ref = g.target(true)
		if g.pct(10) {
			op.Path, op.Ref = Root, -1
		}
	case x < 810:
		op = Op{Kind: OpGetACL}
		op.Path, op.Ref = g.target(true)
	case x < 850:
		op = Op{Kind: OpSetACL, ACL: g.acl(), Version: g.version()}
		op.Path, op.Ref = g.target(true)
	case x < 930:
		op = g.multi()
	case x < 950:
		op = Op{Kind: OpSync}
		op.Path, op.Ref = g.target(true)
	case x < 970:
		op = Op{Kind: OpAddAuth, Auth: g.r.IntN(len(credentials))}
	case x < 985:
		op = Op{Kind: OpReopen}
	default:
		// Reads of the server's own znodes.
		op = Op{Kind: []Kind{OpGet, OpChildren, OpExists, OpGetACL}[g.r.IntN(4)], Ref: -1}
		op.Path = specialPaths[g.r.IntN(len(specialPaths))]
	}
	switch op.Kind {
	case OpMulti, OpAddAuth, OpReopen:
		op.Ref = -1
	}
	op.Session = s
	return op
}

// multi is 1..4 sub-ops; often one of them fails, sometimes one has an
// invalid path.
func (g *gen) multi() Op {
	n := 1 + g.r.IntN(4)
	op := Op{Kind: OpMulti, Ref: -1}
	for range n {
		var sub Op
		switch x := g.r.IntN(100); {
		case x < 40:
			sub = Op{Kind: OpCreate, Ref: -1, Data: g.data(), ACL: g.acl()}
			sub.Path, _ = g.target(true)
			sub.Mode = []int{ModePersistent, ModePersistent, ModeEphemeral, ModeSequential, ModeContainer}[g.r.IntN(5)]
		case x < 60:
			sub = Op{Kind: OpSet, Data: g.data(), Version: g.version()}
			sub.Path, sub.Ref = g.target(true)
		case x < 80:
			sub = Op{Kind: OpDelete, Version: g.version()}
			sub.Path, sub.Ref = g.target(true)
		default:
			sub = Op{Kind: OpCheck, Version: g.version()}
			sub.Path, sub.Ref = g.target(true)
		}
		if g.pct(6) {
			sub.Path, sub.Ref = invalidPaths[g.r.IntN(len(invalidPaths))], -1
		}
		op.Sub = append(op.Sub, sub)
	}
	return op
}
