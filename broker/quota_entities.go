package broker

// The client quotas a broker knows, as Kafka's ClientQuotaManager and its
// DefaultQuotaCallback keep them: per quota kind, the values set for
// eight entity combinations, looked up in Kafka's order of precedence
// (the most specific first):
//
//	/config/users/<user>/clients/<client-id>
//	/config/users/<user>/clients/<default>
//	/config/users/<user>
//	/config/users/<default>/clients/<client-id>
//	/config/users/<default>/clients/<default>
//	/config/users/<default>
//	/config/clients/<client-id>
//	/config/clients/<default>
//
// A client's usage is metered under the entity whose quota applies to it
// (quotaTags), so the clients a user quota covers share one rate, and
// every client id under a client-id quota has its own. Names are kept as
// they are in znode paths (sanitized; see sanitize in scram_store.go), the
// defaults as <default>.

// quotaKind is one of the three quotas a client has.
type quotaKind int

const (
	quotaProduce quotaKind = iota // producer_byte_rate: bytes/s produced
	quotaFetch                    // consumer_byte_rate: bytes/s fetched
	quotaRequest                  // request_percentage: % of one thread's time
	numQuotaKinds
)

// quotaConfigKeys are the quota keys of user and client znodes, with the
// type Kafka gives them (a LONG must be a whole number).
var quotaConfigKeys = map[string]struct {
	kind    quotaKind
	integer bool
}{
	"producer_byte_rate": {quotaProduce, true},
	"consumer_byte_rate": {quotaFetch, true},
	"request_percentage": {quotaRequest, false},
}

// quotaDefault is Kafka's ConfigEntityName.Default, the name of the
// default user or client id in paths.
const quotaDefault = "<default>"

// quotaEntity is who a quota is set for. user and client are sanitized
// names or quotaDefault; an empty one is not part of the entity.
type quotaEntity struct {
	user, client string
}

// path is the entity's config path under /config ("users/u/clients/c").
func (e quotaEntity) path() string {
	switch {
	case e.user != "" && e.client != "":
		return "users/" + e.user + "/clients/" + e.client
	case e.user != "":
		return "users/" + e.user
	default:
		return "clients/" + e.client
	}
}

// quotaEntityOfPath parses an entity path ("users/u", "users/u/clients/c",
// "clients/c").
func quotaEntityOfPath(p string) (quotaEntity, bool) {
	var parts []string
	for len(p) > 0 {
		i := 0
		for i < len(p) && p[i] != '/' {
			i++
		}
		parts = append(parts, p[:i])
		if i < len(p) {
			i++
		}
		p = p[i:]
	}
	for _, s := range parts {
		if s == "" {
			return quotaEntity{}, false
		}
	}
	switch {
	case len(parts) == 2 && parts[0] == "users":
		return quotaEntity{user: parts[1]}, true
	case len(parts) == 2 && parts[0] == "clients":
		return quotaEntity{client: parts[1]}, true
	case len(parts) == 4 && parts[0] == "users" && parts[2] == "clients":
		return quotaEntity{user: parts[1], client: parts[3]}, true
	}
	return quotaEntity{}, false
}

// quotaValues are the quotas set for one entity, by kind.
type quotaValues struct {
	set [numQuotaKinds]bool
	val [numQuotaKinds]float64
}

func (v quotaValues) empty() bool { return v == quotaValues{} }

// quotaValuesOf takes the quota keys of a znode's config; other keys
// (SCRAM credentials) and values that are not numbers are left out.
func quotaValuesOf(cfg map[string]string) quotaValues {
	var v quotaValues
	for k, s := range cfg {
		if q, ok := quotaConfigKeys[k]; ok {
			if f, err := parseQuotaValue(s); err == nil {
				v.set[q.kind], v.val[q.kind] = true, f
			}
		}
	}
	return v
}

// quotaTable is every entity's quotas.
type quotaTable map[quotaEntity]quotaValues

func (t quotaTable) has(k quotaKind, e quotaEntity) bool { return t[e].set[k] }

// tags is the entity a client's usage of kind k is metered under
// (DefaultQuotaCallback.quotaMetricTags): user and client are the
// client's sanitized principal name and its client id.
func (t quotaTable) tags(k quotaKind, user, client string) quotaEntity {
	d := quotaDefault
	switch {
	case t.has(k, quotaEntity{user, client}), t.has(k, quotaEntity{user, d}):
		return quotaEntity{user, client}
	case t.has(k, quotaEntity{user: user}):
		return quotaEntity{user: user}
	case t.has(k, quotaEntity{d, client}), t.has(k, quotaEntity{d, d}):
		return quotaEntity{user, client}
	case t.has(k, quotaEntity{user: d}):
		return quotaEntity{user: user}
	}
	return quotaEntity{client: client}
}

// limit is the quota of kind k for the meter tags names
// (DefaultQuotaCallback.quotaLimit), and whether there is one.
func (t quotaTable) limit(k quotaKind, tags quotaEntity) (float64, bool) {
	d := quotaDefault
	var order []quotaEntity
	switch {
	case tags.user != "" && tags.client != "":
		order = []quotaEntity{tags, {tags.user, d}, {d, tags.client}, {d, d}}
	case tags.user != "":
		order = []quotaEntity{tags, {user: d}}
	case tags.client != "":
		order = []quotaEntity{tags, {client: d}}
	}
	for _, e := range order {
		if v := t[e]; v.set[k] {
			return v.val[k], true
		}
	}
	return 0, false
}
