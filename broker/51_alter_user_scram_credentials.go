package broker

import (
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// AlterUserScramCredentials (51), version 0 (flexible), as Kafka's
// ZkAdminManager.alterUserScramCredentials, one result per user:
//
//   - an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty";
//     an unknown mechanism: UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM
//     mechanism"; iterations outside 4096-16384: UNACCEPTABLE_CREDENTIAL
//     "Too few iterations" / "Too many iterations";
//   - a (user, mechanism) given twice among deletions and upsertions:
//     DUPLICATE_RESOURCE;
//   - a deletion of a credential the user does not have: RESOURCE_NOT_FOUND;
//   - else the user's config znode is rewritten (compare-and-set, retried)
//     with its change notification (scram_store.go): an upsertion stores
//     the credential derived from the client's salted password, a deletion
//     removes the mechanism's entry. This broker reloads the user at once;
//     the others follow the notification.
//
// Unlike Kafka in ZooKeeper mode, any broker takes it, not only the
// controller. Authorization (ALTER on the cluster) is the ACL layer's.

func init() {
	regKey(kproto.KeyAlterUserScramCredentials, 0, 0, kmsgHandler(func(c *conn, req *kmsg.AlterUserSCRAMCredentialsRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
		resp.Results = c.b.scram.alter(req)
		return resp, nil
	}))
}

// alterResult is one user's result.
func alterResult(user string, code int16, msg string) kmsg.AlterUserSCRAMCredentialsResponseResult {
	r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
	r.User, r.ErrorCode = user, code
	if msg != "" {
		r.ErrorMessage = &msg
	}
	return r
}

// alter checks and applies req, in Kafka's order of checks.
func (st *scramStore) alter(req *kmsg.AlterUserSCRAMCredentialsRequest) []kmsg.AlterUserSCRAMCredentialsResponseResult {
	var out []kmsg.AlterUserSCRAMCredentialsResponseResult
	illegal := map[string]kmsg.AlterUserSCRAMCredentialsResponseResult{}
	var order []string
	fail := func(user string, code int16, msg string) {
		if _, seen := illegal[user]; !seen {
			order = append(order, user)
		}
		illegal[user] = alterResult(user, code, msg)
	}
	for _, d := range req.Deletions {
		switch {
		case d.Name == "":
			fail(d.Name, kerr.UnacceptableCredential.Code, "Username must not be empty")
		case scramMechanismName(d.Mechanism) == "":
			fail(d.Name, kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
		}
	}
	for _, u := range req.Upsertions {
		switch {
		case u.Name == "":
			fail(u.Name, kerr.UnacceptableCredential.Code, "Username must not be empty")
		case scramMechanismName(u.Mechanism) == "":
			fail(u.Name, kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
		case u.Iterations < scramMinIterations:
			fail(u.Name, kerr.UnacceptableCredential.Code, "Too few iterations")
		case u.Iterations > scramMaxIterations:
			fail(u.Name, kerr.UnacceptableCredential.Code, "Too many iterations")
		}
	}
	for _, u := range order {
		out = append(out, illegal[u])
	}

	// The (user, mechanism) pairs of the users still valid.
	type pair struct {
		user string
		mech int8
	}
	seen := map[pair]int{}
	var users []string
	addPair := func(user string, mech int8) {
		if _, bad := illegal[user]; bad {
			return
		}
		if !slices.Contains(users, user) {
			users = append(users, user)
		}
		seen[pair{user, mech}]++
	}
	for _, u := range req.Upsertions {
		addPair(u.Name, u.Mechanism)
	}
	for _, d := range req.Deletions {
		addPair(d.Name, d.Mechanism)
	}
	dup := map[string]bool{}
	for p, n := range seen {
		if n > 1 {
			dup[p.user] = true
		}
	}
	for _, u := range users {
		if dup[u] {
			out = append(out, alterResult(u, kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"))
			continue
		}
		code, msg := st.alterUser(u, req)
		out = append(out, alterResult(u, code, msg))
	}
	return out
}

// alterUser applies req's deletions and upsertions of user to its config
// znode.
func (st *scramStore) alterUser(user string, req *kmsg.AlterUserSCRAMCredentialsRequest) (int16, string) {
	for attempt := 0; ; attempt++ {
		cfg, version, err := st.readUser(user)
		if err != nil {
			st.b.log.Warn("AlterUserScramCredentials: reading the user's config", "user", user, "err", err)
			return kerr.UnknownServerError.Code, kerr.UnknownServerError.Description
		}
		for _, d := range req.Deletions {
			if d.Name != user {
				continue
			}
			mech := scramMechanismName(d.Mechanism)
			if _, ok := cfg[mech]; !ok {
				return kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"
			}
			delete(cfg, mech)
		}
		for _, u := range req.Upsertions {
			if u.Name == user {
				mech := scramMechanismName(u.Mechanism)
				cfg[mech] = formatScramCredential(scramCredential(mech, u.Salt, u.SaltedPassword, int(u.Iterations)))
			}
		}
		err = st.writeUser(user, cfg, version)
		if (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists)) && attempt < 10 {
			continue
		}
		if err != nil {
			st.b.log.Warn("AlterUserScramCredentials: writing the user's config", "user", user, "err", err)
			return kerr.UnknownServerError.Code, kerr.UnknownServerError.Description
		}
		st.b.log.Info("SCRAM credentials altered", "user", user)
		st.reload(user)
		return 0, ""
	}
}
