package broker

import (
	"net"

	"github.com/zkafka/zkafka/broker/authz"
)

// The authorization checks of the handlers, as Kafka's KafkaApis and
// AuthHelper make them. Each handler calls one of these near its top;
// without an authorizer (authorizer.class.name unset) every check
// allows, as in Kafka. The inter-broker APIs (LeaderAndIsr,
// UpdateMetadata, StopReplica, ControlledShutdown, a follower's Fetch)
// need allowedCluster(authz.OpClusterAction), else
// CLUSTER_AUTHORIZATION_FAILED: the brokers' principals belong in
// super.users.

// codeSecurityDisabled (SECURITY_DISABLED) is not in kproto.
const codeSecurityDisabled = 54

// authzRequest is who the connection is for the authorizer: its principal
// and the client's IP address (Java's InetAddress.getHostAddress).
func (c *conn) authzRequest() authz.Request {
	host := c.nc.RemoteAddr().String()
	if tcp, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
		host = tcp.IP.String()
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return authz.Request{Principal: c.principal(), Host: host}
}

// allowed reports whether the connection may do op on the resource
// (rt, name).
func (c *conn) allowed(op authz.Operation, rt authz.ResourceType, name string) bool {
	a := c.b.acls
	return a == nil || a.cache.Authorize(c.authzRequest(), op, rt, name)
}

// allowedCluster is allowed on the CLUSTER resource.
func (c *conn) allowedCluster(op authz.Operation) bool {
	return c.allowed(op, authz.ResourceCluster, authz.ClusterName)
}

// allowedTopic is allowed on a topic.
func (c *conn) allowedTopic(op authz.Operation, topic string) bool {
	return c.allowed(op, authz.ResourceTopic, topic)
}

// allowedGroup is allowed on a group.
func (c *conn) allowedGroup(op authz.Operation, group string) bool {
	return c.allowed(op, authz.ResourceGroup, group)
}

// allowedOnSomeTopic is AuthHelper.authorizeByResourceType(op, TOPIC):
// whether the connection may do op on at least one topic.
func (c *conn) allowedOnSomeTopic(op authz.Operation) bool {
	a := c.b.acls
	return a == nil || a.cache.AuthorizeByResourceType(c.authzRequest(), op, authz.ResourceTopic)
}

// authorizedOperations is the bit field of the operations the connection
// may do on (rt, name), for the *_authorized_operations fields; every
// supported operation without an authorizer, as Kafka.
func (c *conn) authorizedOperations(rt authz.ResourceType, name string) int32 {
	var cache *authz.Cache
	if c.b.acls != nil {
		cache = c.b.acls.cache
	}
	return cache.AuthorizedOperations(c.authzRequest(), rt, name)
}
