package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeClientQuotas (48), versions 0-1 (1 is flexible), as Kafka's
// ZkAdminManager.describeClientQuotas: the quotas are read from ZooKeeper
// (/config/users, /config/clients; quota_store.go), and an entity is
// listed when it has a quota key and every filter component matches it.
// A component matches its entity type's name exactly (match type 0),
// the <default> entity (1, the name in the answer is null), or any
// name (2); an entity type without a component matches only an entity
// without that part when strict, anything otherwise. Errors, top level:
// an unknown match type, an empty entity type, a type given twice, or
// "ip" with user or client-id is INVALID_REQUEST; another entity type is
// UNSUPPORTED_VERSION ("Custom entity type ... not supported"), as
// Kafka. zkafka keeps no IP quotas, so an ip component lists nothing.
// DESCRIBE_CONFIGS on the cluster is required, else
// CLUSTER_AUTHORIZATION_FAILED.

const (
	quotaEntityUser     = "user"
	quotaEntityClientID = "client-id"
	quotaEntityIP       = "ip"
)

func init() {
	regKey(kproto.KeyDescribeClientQuotas, 0, 1, kmsgHandler(func(c *conn, req *kmsg.DescribeClientQuotasRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
		fail := func(e *kerr.Error, msg string) (kmsg.Response, error) {
			resp.ErrorCode, resp.ErrorMessage, resp.Entries = e.Code, &msg, nil
			return resp, nil
		}
		if !c.allowedCluster(authz.OpDescribeConfigs) {
			return fail(kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Message)
		}
		f, e, msg := parseQuotaFilter(req)
		if e != nil {
			return fail(e, msg)
		}
		if f.ip != nil {
			return resp, nil // no IP quotas; ip is never combined with the others
		}
		all, err := c.b.readQuotaEntities()
		if err != nil {
			c.log.Warn("DescribeClientQuotas: reading /config", "err", err)
			return fail(kerr.UnknownServerError, err.Error())
		}
		resp.Entries = describedQuotas(all, f)
		return resp, nil
	}))
}

// quotaFilter is a DescribeClientQuotas filter: the user and client-id
// components (nil: none given).
type quotaFilter struct {
	user, client, ip *kmsg.DescribeClientQuotasRequestComponent
	strict           bool
}

// parseQuotaFilter checks the components as Kafka's
// DescribeClientQuotasRequest.filter and describeClientQuotas do.
func parseQuotaFilter(req *kmsg.DescribeClientQuotasRequest) (quotaFilter, *kerr.Error, string) {
	f := quotaFilter{strict: req.Strict}
	for i := range req.Components {
		comp := &req.Components[i]
		switch comp.MatchType {
		case kmsg.QuotasMatchTypeExact, kmsg.QuotasMatchTypeDefault, kmsg.QuotasMatchTypeAny:
		default:
			return f, kerr.InvalidRequest, "Unexpected match type: " + comp.MatchType.String()
		}
		var slot **kmsg.DescribeClientQuotasRequestComponent
		switch comp.EntityType {
		case quotaEntityUser:
			slot = &f.user
		case quotaEntityClientID:
			slot = &f.client
		case quotaEntityIP:
			slot = &f.ip
		case "":
			return f, kerr.InvalidRequest, "Unexpected empty filter component entity type"
		default:
			return f, kerr.UnsupportedVersion, "Custom entity type '" + comp.EntityType + "' not supported"
		}
		if *slot != nil {
			name := map[string]string{quotaEntityUser: "user", quotaEntityClientID: "client", quotaEntityIP: "ip"}[comp.EntityType]
			return f, kerr.InvalidRequest, "Duplicate " + name + " filter component entity type"
		}
		*slot = comp
	}
	if f.ip != nil && (f.user != nil || f.client != nil) {
		return f, kerr.InvalidRequest, "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component."
	}
	return f, nil, ""
}

// quotaNameMatches is Kafka's matches: name is the entity's part
// (sanitized, quotaDefault, or "" when the entity has none).
func quotaNameMatches(comp *kmsg.DescribeClientQuotasRequestComponent, name string, strict bool) bool {
	if comp == nil {
		return name == "" || !strict
	}
	switch comp.MatchType {
	case kmsg.QuotasMatchTypeExact:
		return comp.Match != nil && name != "" && name != quotaDefault && desanitize(name) == *comp.Match
	case kmsg.QuotasMatchTypeDefault:
		return name == quotaDefault
	default:
		return name != ""
	}
}

// describedQuotas lists the entities of all that have a quota key and
// match f, by path.
func describedQuotas(all map[quotaEntity]map[string]string, f quotaFilter) []kmsg.DescribeClientQuotasResponseEntry {
	var ents []quotaEntity
	for e := range all {
		ents = append(ents, e)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].path() < ents[j].path() })
	var out []kmsg.DescribeClientQuotasResponseEntry
	for _, e := range ents {
		if !quotaNameMatches(f.user, e.user, f.strict) || !quotaNameMatches(f.client, e.client, f.strict) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, k := range sortedKeys(all[e]) {
			if !describedQuotaKey(k) {
				continue
			}
			v, err := parseQuotaValue(all[e][k])
			if err != nil {
				continue // Kafka fails the request (IllegalStateException); one bad value hides only itself here
			}
			val := kmsg.NewDescribeClientQuotasResponseEntryValue()
			val.Key, val.Value = k, v
			entry.Values = append(entry.Values, val)
		}
		if len(entry.Values) == 0 {
			continue
		}
		for _, part := range []struct{ typ, name string }{{quotaEntityUser, e.user}, {quotaEntityClientID, e.client}} {
			if part.name == "" {
				continue
			}
			ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ent.Type = part.typ
			if part.name != quotaDefault {
				ent.Name = strp(desanitize(part.name))
			}
			entry.Entity = append(entry.Entity, ent)
		}
		out = append(out, entry)
	}
	return out
}

// describedQuotaKey: the quota keys (QuotaConfigs.isClientOrUserConfig),
// with controller_mutation_rate, which zkafka does not enforce but lists
// when Kafka's tools wrote it.
func describedQuotaKey(k string) bool {
	_, ok := quotaConfigKeys[k]
	return ok || k == quotaControllerMutationRate
}

const quotaControllerMutationRate = "controller_mutation_rate"

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
