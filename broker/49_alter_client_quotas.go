package broker

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// AlterClientQuotas (49), versions 0-1 (1 is flexible), as Kafka's
// ZkAdminManager.alterClientQuotas: each entry's entity is a user, a
// client id or both (a null name is the <default> entity); its ops set a
// quota key or remove one (remove: any key, even one that is not set).
// The entity's config znode is rewritten with every other key kept (the
// user's SCRAM credentials among them) and a /config/changes notification,
// so every broker applies it without restart (quota_store.go);
// validate_only checks and writes nothing. Errors are per entry,
// INVALID_REQUEST as Kafka words them: an empty entity, an unknown entity
// type, an empty name, an unknown key, a fractional value for a LONG key
// (producer_byte_rate, consumer_byte_rate). Not in zkafka, and refused
// with INVALID_REQUEST: ip entities (connection_creation_rate) and
// controller_mutation_rate. ALTER_CONFIGS on the cluster is required, else
// every entry is CLUSTER_AUTHORIZATION_FAILED.

func init() {
	regKey(kproto.KeyAlterClientQuotas, 0, 1, kmsgHandler(func(c *conn, req *kmsg.AlterClientQuotasRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
		allowed := c.allowedCluster(authz.OpAlterConfigs)
		for i := range req.Entries {
			re := &req.Entries[i]
			out := kmsg.NewAlterClientQuotasResponseEntry()
			for _, ent := range re.Entity {
				oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
				oe.Type, oe.Name = ent.Type, ent.Name
				out.Entity = append(out.Entity, oe)
			}
			err := quotaError(kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Message)
			if allowed {
				err = c.b.alterClientQuota(re, req.ValidateOnly)
			}
			var qe *quotaRequestError
			switch {
			case err == nil:
			case errors.As(err, &qe):
				out.ErrorCode, out.ErrorMessage = qe.code.Code, strp(qe.msg)
			default:
				c.log.Warn("AlterClientQuotas: writing the config znode", "err", err)
				out.ErrorCode, out.ErrorMessage = kerr.UnknownServerError.Code, strp(err.Error())
			}
			resp.Entries = append(resp.Entries, out)
		}
		return resp, nil
	}))
}

// quotaRequestError is a refused entry: its error code and message.
type quotaRequestError struct {
	code *kerr.Error
	msg  string
}

func (e *quotaRequestError) Error() string { return e.msg }

func quotaError(code *kerr.Error, msg string) error { return &quotaRequestError{code, msg} }

func invalidQuota(msg string) error { return quotaError(kerr.InvalidRequest, msg) }

// alterClientQuota applies one entry.
func (b *Broker) alterClientQuota(re *kmsg.AlterClientQuotasRequestEntry, validateOnly bool) error {
	e, err := quotaEntityOfRequest(re.Entity)
	if err != nil {
		return err
	}
	return b.alterQuotaZNode(e, validateOnly, func(cfg map[string]string) error {
		for _, op := range re.Ops {
			if op.Remove {
				delete(cfg, op.Key)
				continue
			}
			v, err := quotaValueString(op.Key, op.Value)
			if err != nil {
				return err
			}
			cfg[op.Key] = v
		}
		return nil
	})
}

// quotaEntityOfRequest is Kafka's parseAndSanitizeQuotaEntity: the last
// name given for a type counts, as in Kafka's map of them.
func quotaEntityOfRequest(ents []kmsg.AlterClientQuotasRequestEntryEntity) (quotaEntity, error) {
	if len(ents) == 0 {
		return quotaEntity{}, invalidQuota("Invalid empty client quota entity")
	}
	var e quotaEntity
	ip := false
	for _, ent := range ents {
		name := quotaDefault
		if ent.Name != nil {
			name = sanitize(*ent.Name)
		}
		switch ent.Type {
		case quotaEntityUser:
			e.user = name
		case quotaEntityClientID:
			e.client = name
		case quotaEntityIP:
			ip = true
		default:
			return e, invalidQuota("Unhandled client quota entity type: " + ent.Type)
		}
		if ent.Name != nil && *ent.Name == "" {
			return e, invalidQuota("Empty " + ent.Type + " not supported")
		}
	}
	switch {
	case ip && (e.user != "" || e.client != ""):
		return e, invalidQuota("Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
	case ip:
		return e, invalidQuota("IP quotas (connection_creation_rate) are not supported by zkafka")
	}
	return e, nil
}

// quotaValueString checks a quota value and formats it as Kafka stores it:
// a LONG key's whole number as digits, a DOUBLE as Java's Double.toString.
func quotaValueString(key string, v float64) (string, error) {
	if key == quotaControllerMutationRate {
		return "", invalidQuota("controller_mutation_rate is not supported by zkafka")
	}
	q, ok := quotaConfigKeys[key]
	if !ok {
		return "", invalidQuota("Invalid configuration key " + key)
	}
	if !q.integer {
		return javaDouble(v), nil
	}
	const epsilon = 1e-6
	n := int64(v + epsilon)
	if math.Abs(float64(n)-v) > epsilon {
		return "", invalidQuota("Configuration " + key + " must be a LONG value")
	}
	return strconv.FormatInt(n, 10), nil
}

// javaDouble is Java's Double.toString: plain decimals with at least one
// digit after the point in [1e-3, 1e7), else d.dddE±n.
func javaDouble(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64) // 1.5E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
