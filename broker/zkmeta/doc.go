// Package zkmeta is the broker's view of ZooKeeper: a session with the
// chroot of zookeeper.connect applied to every path (Client), and the
// znodes of Apache Kafka's ZooKeeper mode — their paths and JSON shapes.
// The session reconnects without go-zookeeper's one-second pause for the
// first two attempts after a session (hostprovider.go), so a broker woken
// after its session expired re-registers at once. It knows nothing of
// partitions, logs or the controller; broker,
// broker/controller and the group coordinator import it, never the other
// way round.
//
// # Layout
//
//	/cluster/id                               {"version":"1","id":"<base64 uuid>"}
//	/brokers/ids/{id}          ephemeral      BrokerZNode (version 5; its czxid is the broker epoch)
//	/brokers/topics/{t}                       TopicZNode (version 3, topic_id, partitions: {"0":[1,2,3]})
//	/brokers/topics/{t}/partitions/{p}/state  PartitionStateZNode (version 1; zkVersion is the CAS token)
//	/config/topics/{t}                        ConfigZNode (version 1, config overrides)
//	/config/users/{user}                      ConfigZNode (version 1, SCRAM credentials by mechanism, quotas)
//	/config/users/{user}/clients/{client}     ConfigZNode (version 1, quotas; {user} may be <default>)
//	/config/clients/{client}                  ConfigZNode (version 1, quotas; {client} may be <default>)
//	/config/brokers/{id}, /config/brokers/<default>  ConfigZNode (version 1, dynamic broker configs)
//	/config/changes/config_change_N           ConfigChangeZNode (persistent sequential, a config changed)
//	/admin/delete_topics/{t}                  marker, carried out by the controller
//	/controller                ephemeral      ControllerZNode (version 2, brokerid)
//	/controller_epoch                         decimal epoch; its zkVersion fences controller writes
//	/latest_producer_id_block                 ProducerIDBlockZNode
//	/kafka-acl/{Type}/{name}                  AclsZNode (literal patterns; acl.go)
//	/kafka-acl-extended/prefixed/{Type}/{n}   AclsZNode (prefixed patterns)
//	/kafka-acl-changes/acl_changes_N          "TOPIC:name" (persistent sequential)
//	/kafka-acl-extended-changes/acl_changes_N ExtendedACLChangeZNode
//
// # Security
//
// DialSecure secures the session as Kafka's ZooKeeper client does
// (security.go): TLS through go-zookeeper's dialer, SASL DIGEST-MD5 run by
// a connection wrapper before go-zookeeper reads the ConnectResponse
// (sasl.go; go-zookeeper has no SASL), and, with SecureACLs, Kafka's
// secure ACLs on every znode created (ACL: creator all + world read,
// creator only on /config/users, /config/brokers, /delegation_token).
//
// # Invariants
//
//   - Every znode the broker creates gets Client.ACL of its path.
//   - Every path passed to Client is chroot-relative; Client adds the
//     chroot (go-zookeeper has none), including inside Multi's ops.
//   - A Multi reports the first failing op's error, so a failed
//     CheckVersionRequest on /controller_epoch surfaces as zk.ErrBadVersion.
package zkmeta
