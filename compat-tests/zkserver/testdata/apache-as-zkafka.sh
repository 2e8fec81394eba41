#!/usr/bin/env bash
# A stand-in for the zkafka binary that runs Apache ZooKeeper instead:
# `apache-as-zkafka.sh zookeeper [flags] zoo.cfg`. It checks the zkafka half of
# the harness end to end before our server exists:
#
#   ZKAFKA_BIN=$PWD/compat-tests/zkserver/testdata/apache-as-zkafka.sh \
#     ZKAFKA_ZK_READY=1 bash compat-tests/compat.sh
#
# Every check then compares Apache with Apache and must pass.
set -euo pipefail
[ "${1:-}" = zookeeper ] || { echo "usage: $0 zookeeper [flags] zoo.cfg" >&2; exit 2; }
cfg=${!#}
interval=$(sed -n 's/^znode\.container\.checkIntervalMs=//p' "$cfg")
exec java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	-Dzookeeper.admin.enableServer=false ${interval:+-Dznode.container.checkIntervalMs=$interval} \
	-cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-nop.jar \
	org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg"
