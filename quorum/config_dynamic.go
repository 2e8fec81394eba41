package quorum

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/internal/properties"
)

// The dynamic configuration file of ZooKeeper 3.5+ (QuorumPeerConfig.parse):
// zoo.cfg names it with dynamicConfigFile=PATH (opened as given, relative
// to the working directory, as ZooKeeper's FileInputStream does), and it
// holds the server.N lines only. The configuration version is the hex
// suffix of its name (zoo.cfg.dynamic.100000000 is version 0x100000000;
// no hex suffix is version 0); a version key inside the file is an error.
// With dynamicConfigFile, server.N lines in zoo.cfg itself are an error
// too ("must be in a separate dynamic config file").

// maxDynamicFile bounds the dynamic configuration file (255 server lines
// take a few kB).
const maxDynamicFile = 1 << 20

// dynamicConfigVersion is QuorumPeerConfig.getVersionFromFilename: the hex
// number after the last '.' of name, or 0.
func dynamicConfigVersion(name string) uint64 {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return 0
	}
	v, err := strconv.ParseUint(name[i+1:], 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// hasDynamicFile reports whether props set dynamicConfigFile.
func hasDynamicFile(props []properties.Property) bool {
	for _, prop := range props {
		if prop.Key == "dynamicConfigFile" {
			return true
		}
	}
	return false
}

// refuseStaticServers is ZooKeeper's check that no server.N (nor group,
// weight) line sits in zoo.cfg beside a dynamicConfigFile.
func refuseStaticServers(props []properties.Property) error {
	for _, prop := range props {
		k := prop.Key
		if strings.HasPrefix(k, "server.") || strings.HasPrefix(k, "group") || strings.HasPrefix(k, "weight") {
			return prop.Bad("must be in a separate dynamic config file (zoo.cfg sets dynamicConfigFile)")
		}
	}
	return nil
}

// loadDynamicFile reads the server.N lines of the dynamic configuration
// file into p.c.Servers and its version into p.c.ConfigVersion.
func (p *configParser) loadDynamicFile(prop properties.Property) error {
	path, err := nonEmpty(prop, "must name the dynamic configuration file (zoo.cfg.dynamic.VERSION)")
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err == nil && (!fi.Mode().IsRegular() || fi.Size() > maxDynamicFile) {
		err = fmt.Errorf("not a regular file of at most %d bytes", maxDynamicFile)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return prop.Bad(fmt.Sprintf("cannot read the dynamic configuration file: %v", err))
	}
	props, err := properties.Load(bytes.NewReader(data))
	if err != nil {
		return properties.WithFile(err, path)
	}
	for _, dp := range props {
		var err error
		switch {
		case dp.Key == "version":
			err = dp.Bad("a dynamic configuration file must not hold its version (it is the hex suffix of the file name)")
		case strings.HasPrefix(dp.Key, "server."), strings.HasPrefix(dp.Key, "group."), strings.HasPrefix(dp.Key, "weight."):
			err = p.applyOther(dp, dp.Trimmed())
		default:
			err = dp.Bad("unrecognised parameter: a dynamic configuration file holds server.N lines only")
		}
		if err != nil {
			return properties.WithFile(err, path)
		}
	}
	p.c.DynamicConfigFile = path
	p.c.ConfigVersion = dynamicConfigVersion(path)
	return nil
}
