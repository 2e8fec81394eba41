// Package authz is the pure part of the broker's ACL authorizer, as Apache
// Kafka's AclAuthorizer (ZooKeeper mode) decides: the ACL model (resource
// patterns, access control entries, their names and codes on the wire and
// in ZooKeeper), the filters of DescribeAcls and DeleteAcls, and the
// cache that answers "may this principal, from this host, do this
// operation on this resource". It does no IO: the broker loads the cache
// from ZooKeeper (broker/acl_store.go) and asks it.
//
// # Rules (AclAuthorizer.authorizeAction)
//
//   - A principal in super.users may do everything.
//   - The ACLs that apply to resource R of type T are those of the
//     literal pattern R, of the literal wildcard "*", and of every
//     prefixed pattern that R starts with.
//   - None apply: allowed iff allow.everyone.if.no.acl.found.
//   - A Deny for the operation (or All), the principal (or User:*) and the
//     host (or "*") wins over any Allow.
//   - Otherwise an Allow is needed; READ, WRITE, DELETE and ALTER imply
//     DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS.
//
// AuthorizeByResourceType (used by InitProducerId: "WRITE on any topic")
// follows AclAuthorizer.authorizeByResourceType: allowed when some Allow
// pattern of that type is not dominated by a Deny.
//
// # Concurrency
//
// Cache is safe for concurrent use; readers share an RWMutex and writers
// replace one pattern's entries at a time.
package authz
