package zkproto

import (
	"reflect"
	"testing"
)

// TestDecodeACLsShared checks that the world:anyone lists, which DecodeACLs
// returns shared, decode to what was encoded, that the others still decode
// fresh, and that what follows the list is read from the right place.
func TestDecodeACLsShared(t *testing.T) {
	lists := [][]ACL{
		OpenACLUnsafe,
		ReadACLUnsafe,
		{{Perms: 0, ID: AnyoneIDUnsafe}},
		{{Perms: PermAll + 1, ID: AnyoneIDUnsafe}},
		{{Perms: -1, ID: AnyoneIDUnsafe}},
		{{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyonf"}}},
		{{Perms: PermAll, ID: ID{Scheme: "ip", ID: "127.0.0.1"}}},
		{{Perms: PermRead, ID: AnyoneIDUnsafe}, {Perms: PermAll, ID: AnyoneIDUnsafe}},
	}
	for _, want := range lists {
		r := NewReader(AppendInt(AppendACLs(nil, want), 7))
		got := DecodeACLs(r)
		if next := r.Int(); r.Complete() != nil || next != 7 || !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeACLs(%v) = %v, then %d (%v)", want, got, next, r.Complete())
		}
	}
	a := DecodeACLs(NewReader(AppendACLs(nil, OpenACLUnsafe)))
	_ = append(a, ACL{Perms: PermRead, ID: ID{Scheme: "ip", ID: "10.0.0.1"}})
	if b := DecodeACLs(NewReader(AppendACLs(nil, OpenACLUnsafe))); !reflect.DeepEqual(b, OpenACLUnsafe) {
		t.Errorf("after an append to a shared list: %v", b)
	}
	if DecodeACLs(NewReader(AppendInt(nil, 1)[:3])) != nil {
		t.Error("a truncated vector decoded")
	}
}
