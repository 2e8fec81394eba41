# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST):
# Apache ZooKeeper 3.8 writes a data directory (every txn type, a torn log,
# a restart, snapshots, open sessions); zkafka imports it and answers as
# Apache does on the same files; Apache loads zkafka's export and answers
# the same again; a Kafka broker that ran on Apache ZooKeeper serves its
# topic, records and committed offsets on zkafka after the import.
check go-zookeeper zk-import zk-import "${GOTEST[@]}" -run '^(TestImportExportApache|TestKafkaMetadataSurvivesImport)$' ./compat-tests/zkimport/
