// Package kafkatxnfaults is the transaction checker against a cluster of
// real processes (compat-tests/internal/kcluster: three brokers,
// min.insync.replicas 2, RF 3): transactional franz-go producers commit
// and abort at random over the partitions of a topic while a partition
// leader and a transaction coordinator are killed with SIGKILL and
// restarted; read_committed consumers then read everything back, and
// ktxn.Check counts the anomalies (an aborted record read, a committed
// transaction read partially or twice, a transaction of unknown outcome
// read partially). The test logs the table: transactions committed,
// aborted, of unknown outcome, and the anomalies found, per fault.
package kafkatxnfaults
