package znode

import (
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/zkproto"
)

// ACL lists are interned like ZooKeeper's ReferenceCountedACLCache: each
// node stores an index into Tree.acls. The table only grows while a tree
// lives (ReadSnapshot drops unused entries), so a Clone can share its prefix.
const (
	aclOpen uint32 = 0 // world:anyone, all perms (the system nodes)
	aclRead uint32 = 1 // world:anyone, read (/zookeeper/config)
)

// internACL returns the index of acl, adding it to the table if needed.
// t.mu must be held for writing.
func (t *Tree) internACL(acl []zkproto.ACL) uint32 {
	if int(t.aclLast) < len(t.acls) && equalACLs(acl, t.acls[t.aclLast]) { // most creates repeat the last ACL
		return t.aclLast
	}
	if t.aclIdx == nil {
		t.aclIdx = make(map[string]uint32, len(t.acls))
		for i, l := range t.acls {
			t.aclIdx[aclKey(l)] = uint32(i)
		}
	}
	k := aclKey(acl)
	i, ok := t.aclIdx[k]
	if !ok {
		i = uint32(len(t.acls))
		t.acls = append(t.acls, append([]zkproto.ACL(nil), acl...))
		t.aclIdx[k] = i
	}
	t.aclLast = i
	return i
}

func equalACLs(a, b []zkproto.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func aclKey(acl []zkproto.ACL) string { return string(zkproto.AppendACLs(nil, acl)) }

// fixupACL is PrepRequestProcessor.fixupACL: drop duplicates, refuse an empty
// list or an unknown scheme or a malformed id, and expand "auth" to every
// identity of the session whose scheme is an authenticating provider
// (digest and x509, and sasl when sasl is registered; ip is not one, and
// super has no provider).
func fixupACL(acl []zkproto.ACL, auth []zkproto.ID, sasl bool) ([]zkproto.ACL, zkproto.Err) {
	if len(acl) == 1 && acl[0].ID == zkproto.AnyoneIDUnsafe {
		return acl, zkproto.ErrOK // the common case, without allocating
	}
	uniq := make([]zkproto.ACL, 0, len(acl))
	for _, a := range acl {
		if !containsACL(uniq, a) {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, zkproto.ErrInvalidACL
	}
	out := make([]zkproto.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch {
		case a.ID.Scheme == "world" && a.ID.ID == "anyone":
			out = append(out, a)
		case a.ID.Scheme == "auth":
			n := len(out)
			for _, id := range auth {
				if id.Scheme == "digest" || id.Scheme == "x509" || sasl && id.Scheme == "sasl" {
					out = append(out, zkproto.ACL{Perms: a.Perms, ID: id})
				}
			}
			if len(out) == n {
				return nil, zkproto.ErrInvalidACL
			}
		case validID(a.ID, sasl):
			out = append(out, a)
		default:
			return nil, zkproto.ErrInvalidACL
		}
	}
	return out, zkproto.ErrOK
}

func containsACL(l []zkproto.ACL, a zkproto.ACL) bool {
	for _, b := range l {
		if a == b {
			return true
		}
	}
	return false
}

// validID is AuthenticationProvider.isValid for the providers ZooKeeper
// registers by default, digest and ip, and x509 (any id is valid), which a
// secure client port uses, and sasl when sasl is registered.
func validID(id zkproto.ID, sasl bool) bool {
	switch id.Scheme {
	case "sasl":
		return sasl && validKerberosName(id.ID)
	case "x509":
		return true
	case "digest":
		return javaSplitLen(id.ID, ':') == 2
	case "ip":
		_, _, ok := parseIPACL(id.ID)
		return ok
	}
	return false
}

// validKerberosName is SASLAuthenticationProvider.isValid: new
// KerberosName(id) throws only for a name with '@' that is not
// service[/host]@realm (no '/' or '@' inside the parts).
func validKerberosName(id string) bool {
	if !strings.Contains(id, "@") {
		return true
	}
	principal, realm, _ := strings.Cut(id, "@")
	service, host, _ := strings.Cut(principal, "/")
	return !strings.ContainsAny(realm, "/@") && !strings.ContainsAny(host, "/@") && !strings.ContainsAny(service, "/@")
}

// javaSplitLen is len(s.split(sep)) in Java: trailing empty strings are
// dropped, but "" splits to [""].
func javaSplitLen(s string, sep byte) int {
	if s == "" {
		return 1
	}
	parts := strings.Split(s, string(sep))
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	return n
}

// CheckACLList reports whether identities ids (or super) hold perm in acl,
// with ZooKeeperServer.checkACL's rules: ErrOK or ErrNoAuth.
func CheckACLList(acl []zkproto.ACL, perm int32, ids []zkproto.ID, super bool) zkproto.Err {
	return checkACL(acl, perm, ids, super)
}

// checkACL is ZooKeeperServer.checkACL. An empty ACL allows everything; a
// "super" identity or super bypasses the check.
func checkACL(acl []zkproto.ACL, perm int32, auth []zkproto.ID, super bool) zkproto.Err {
	if super || len(acl) == 0 {
		return zkproto.ErrOK
	}
	for _, id := range auth {
		if id.Scheme == "super" {
			return zkproto.ErrOK
		}
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return zkproto.ErrOK
		}
		for _, id := range auth {
			if id.Scheme == a.ID.Scheme && matchID(id.Scheme, id.ID, a.ID.ID) {
				return zkproto.ErrOK
			}
		}
	}
	return zkproto.ErrNoAuth
}

func matchID(scheme, id, expr string) bool {
	switch scheme {
	case "digest", "x509":
		return id == expr
	case "sasl":
		// SASLAuthenticationProvider.matches: the sasl user "super"
		// matches every sasl ACL.
		return id == expr || id == "super"
	case "ip":
		return matchIP(id, expr)
	}
	return false
}

// parseIPACL parses "a.b.c.d" or "a.b.c.d/bits" (IPv4 only, as in
// IPAuthenticationProvider of ZooKeeper 3.8).
func parseIPACL(expr string) (addr [4]byte, bits int, ok bool) {
	a, b, hasBits := strings.Cut(expr, "/")
	addr, ok = parseIPv4(a)
	if !ok {
		return addr, 0, false
	}
	bits = 32
	if hasBits {
		n, err := strconv.Atoi(b)
		if err != nil || n < 0 || n > 32 {
			return addr, 0, false
		}
		bits = n
	}
	return addr, bits, true
}

func parseIPv4(s string) (b [4]byte, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return b, false
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 255 {
			return b, false
		}
		b[i] = byte(v)
	}
	return b, true
}

func matchIP(id, expr string) bool {
	acl, bits, ok := parseIPACL(expr)
	if !ok {
		return false
	}
	remote, ok := parseIPv4(id)
	if !ok {
		return false
	}
	for i := 0; i < 4; i++ {
		m := maskByte(bits - 8*i)
		if acl[i]&m != remote[i]&m {
			return false
		}
	}
	return true
}

func maskByte(bits int) byte {
	switch {
	case bits >= 8:
		return 0xff
	case bits <= 0:
		return 0
	}
	return ^byte(0xff >> bits)
}

// RedactDigests returns acl with digest ids shown as "user:x", which is what
// getACL returns to a client without ADMIN permission on the node.
func RedactDigests(acl []zkproto.ACL) []zkproto.ACL {
	out := make([]zkproto.ACL, len(acl))
	for i, a := range acl {
		if a.ID.Scheme == "digest" {
			if u, _, ok := strings.Cut(a.ID.ID, ":"); ok {
				a.ID.ID = u + ":x"
			}
		}
		out[i] = a
	}
	return out
}
