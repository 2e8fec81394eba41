package authz

import (
	"strconv"
	"testing"
)

// BenchmarkAuthorize: one decision among 10,000 topic ACLs (literal and
// prefixed, several principals), as a produce request makes per topic.
func BenchmarkAuthorize(b *testing.B) {
	c := NewCache(nil, false)
	for i := range 5000 {
		n := "topic-" + strconv.Itoa(i)
		c.Set(lit(ResourceTopic, n), []Entry{allow("User:p"+strconv.Itoa(i%50), OpWrite), deny("User:x", OpRead)})
		c.Set(pre(ResourceTopic, n+"-"), []Entry{allow("User:p"+strconv.Itoa(i%50), OpRead)})
	}
	r := Request{"User:p7", "127.0.0.1"}
	b.ReportAllocs()
	for b.Loop() {
		if !c.Authorize(r, OpWrite, ResourceTopic, "topic-4257") {
			b.Fatal("denied")
		}
	}
}
