package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeUserScramCredentials (50), version 0 (flexible), as Kafka's
// ZkAdminManager.describeUserScramCredentials: null or no users lists
// every user with a SCRAM credential (sorted); a named user without one is
// RESOURCE_NOT_FOUND, an empty name RESOURCE_NOT_FOUND "Username must not
// be empty", a name given twice DUPLICATE_RESOURCE (one result for it).
// The credentials are read from ZooKeeper, /config/users, as Kafka does
// (not the broker's cache, which follows it a moment later); a read that
// fails is the top-level error. Authorization (DESCRIBE on the cluster)
// is the ACL layer's.

func init() {
	regKey(kproto.KeyDescribeUserScramCredentials, 0, 0, kmsgHandler(func(c *conn, req *kmsg.DescribeUserSCRAMCredentialsRequest) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
		var names []string
		for _, u := range req.Users {
			names = append(names, u.Name)
		}
		snap, err := c.b.scram.iterations(names)
		if err != nil {
			resp.ErrorCode, resp.ErrorMessage = kerr.UnknownServerError.Code, strp("Error processing describe user SCRAM credential configs request")
			c.log.Warn("DescribeUserScramCredentials: reading /config/users", "err", err)
			return resp, nil
		}
		if len(req.Users) == 0 {
			names := make([]string, 0, len(snap))
			for u := range snap {
				names = append(names, u)
			}
			sort.Strings(names)
			for _, u := range names {
				resp.Results = append(resp.Results, describedUser(u, snap[u]))
			}
			return resp, nil
		}
		count := map[string]int{}
		for _, u := range req.Users {
			count[u.Name]++
		}
		done := map[string]bool{}
		for _, ru := range req.Users {
			u := ru.Name
			if done[u] {
				continue
			}
			done[u] = true
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.User = u
			switch {
			case u == "":
				r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, strp("Username must not be empty")
			case count[u] > 1:
				r.ErrorCode, r.ErrorMessage = kerr.DuplicateResource.Code, strp("Cannot describe SCRAM credentials for the same user twice in a single request: "+u)
			case snap[u] == nil:
				r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, strp("Attempt to describe a user credential that does not exist: "+u)
			default:
				r = describedUser(u, snap[u])
			}
			resp.Results = append(resp.Results, r)
		}
		return resp, nil
	}))
}

// describedUser is the result of a user with credentials, by mechanism
// type order.
func describedUser(u string, mechs map[string]int) kmsg.DescribeUserSCRAMCredentialsResponseResult {
	r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
	r.User = u
	for _, name := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		if iters, ok := mechs[name]; ok {
			ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
			ci.Mechanism, ci.Iterations = scramMechanisms[name].typ, int32(iters)
			r.CredentialInfos = append(r.CredentialInfos, ci)
		}
	}
	return r
}

func strp(s string) *string { return &s }
