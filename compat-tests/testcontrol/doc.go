// Package testcontrol drives the fault-injection HTTP API of package
// zkafkatest (what `zkafka run --control` serves) from clients that are
// not Go: kcat (librdkafka) produces through an injected
// NOT_LEADER_OR_FOLLOWER and retries, and kazoo sees the session expiry
// it asked for over HTTP. The tests need kcat and python3-kazoo, so they
// carry the compat build tag (compat-part.sh runs them).
package testcontrol
