package authz

import "slices"

// Union is entries with add appended, each entry once (Kafka keeps a
// pattern's ACLs as a set; zkafka keeps the order they came in).
func Union(entries, add []Entry) []Entry {
	out := slices.Clone(entries)
	for _, e := range add {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// Remove splits p's entries by filters for DeleteAcls: keep are the
// entries no filter matches; deleted[i] are those credited to filters[i],
// each entry to the first filter that matches it (as
// AclAuthorizer.deleteAcls credits a binding to the first filter index).
func Remove(p Pattern, entries []Entry, filters []Filter) (keep []Entry, deleted [][]Entry) {
	deleted = make([][]Entry, len(filters))
	for _, e := range entries {
		hit := -1
		for i := range filters {
			if filters[i].MatchesPattern(p) && filters[i].MatchesEntry(e) {
				hit = i
				break
			}
		}
		if hit < 0 {
			keep = append(keep, e)
		} else {
			deleted[hit] = append(deleted[hit], e)
		}
	}
	return keep, deleted
}
