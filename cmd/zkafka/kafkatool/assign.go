package kafkatool

import "sort"

// rangeAssign is the old Kafka consumer's range assignment of one topic:
// the sorted partitions are cut into len(consumers) runs over the sorted
// consumer ids, the first n%c consumers taking one partition more. It
// returns me's partitions, none if me is not among consumers. Every
// consumer computes it from the same znodes, so they agree without
// talking to each other.
func rangeAssign(partitions []int32, consumers []string, me string) []int32 {
	ps := append([]int32(nil), partitions...)
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	cs := append([]string(nil), consumers...)
	sort.Strings(cs)
	i := sort.SearchStrings(cs, me)
	if i == len(cs) || cs[i] != me {
		return nil
	}
	per, extra := len(ps)/len(cs), len(ps)%len(cs)
	start := i*per + min(i, extra)
	n := per
	if i < extra {
		n++
	}
	return ps[start : start+n]
}
