// Package zkdata holds the commands that move data between Apache
// ZooKeeper and zkafka: zk-import (an Apache ZooKeeper data directory into
// a zkafka data directory), zk-export (a stopped zkafka server's data into
// a snapshot Apache ZooKeeper 3.8 loads) and zk-copy (a live copy of a
// tree through the client protocol). The formats are store/apachezk's; the
// zkafka side is quorum.ImportTree and quorum.ExportTree.
package zkdata
