// Package zkadmin compares zkafka's AdminServer with Apache ZooKeeper
// 3.8's Jetty AdminServer (Debian's package, admin.enableServer=true on a
// free port): the same client actions on both, then every command's JSON
// compared key by key, nested objects included (go test -tags compat).
package zkadmin
