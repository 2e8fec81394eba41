package kafkatool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"
)

// clusterCmd is one screen of cluster health: the brokers and the
// controller (from the brokers), the controller epoch and the ZooKeeper
// ensemble (from ZooKeeper, with --zookeeper: every member that
// /zookeeper/config names, asked srvr and mntr), and the partitions that
// are under-replicated or offline. An ensemble with no broker registered
// shows the ZooKeeper part alone.
func clusterCmd() *cobra.Command {
	f := &connFlags{}
	c := &cobra.Command{Use: "cluster", Short: "brokers, controller, ZooKeeper ensemble and unhealthy partitions", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := withCluster(cmd, f, func(ctx context.Context, cl *cluster) error {
				h, err := clusterHealth(ctx, cl)
				if err != nil {
					return err
				}
				return showHealth(cmd, f, h)
			})
			if errors.Is(err, errNoBrokers) {
				return zooKeeperOnly(cmd, f)
			}
			return err
		}}
	f.register(c)
	return c
}

type health struct {
	ClusterID       string          `json:"cluster_id"`
	Controller      int32           `json:"controller"`
	ControllerEpoch *int64          `json:"controller_epoch,omitempty"` // from /controller_epoch
	Brokers         []brokerRow     `json:"brokers"`
	ZooKeeper       []zkServer      `json:"zookeeper,omitempty"`
	UnderReplicated []partitionInfo `json:"under_replicated"`
	Offline         []partitionInfo `json:"offline"`
}

type brokerRow struct {
	ID         int32  `json:"id"`
	Host       string `json:"host"`
	Port       int32  `json:"port"`
	Rack       string `json:"rack,omitempty"`
	Controller bool   `json:"controller"`
}

// zkServer is one ensemble member as its srvr (and mntr, when the
// server's 4lw.commands.whitelist allows it) tell.
type zkServer struct {
	Address     string            `json:"address"`
	Mode        string            `json:"mode"` // standalone, leader, follower, observer, or the error
	Version     string            `json:"version,omitempty"`
	Zxid        string            `json:"zxid,omitempty"`
	Connections string            `json:"connections,omitempty"`
	Mntr        map[string]string `json:"mntr,omitempty"`
}

func showHealth(cmd *cobra.Command, f *connFlags, h *health) error {
	if f.json() {
		return printJSON(cmd.OutOrStdout(), h)
	}
	printHealth(cmd.OutOrStdout(), h)
	return nil
}

// zooKeeperOnly is the screen of an ensemble that no broker uses (yet):
// the ZooKeeper part alone, not a failure.
func zooKeeperOnly(cmd *cobra.Command, f *connFlags) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	z, err := f.requireZooKeeper(ctx)
	if err != nil {
		return err
	}
	defer z.Close()
	h := &health{Controller: -1}
	zooKeeperHealth(ctx, z, h)
	return showHealth(cmd, f, h)
}

// zooKeeperHealth fills in the controller epoch and the ensemble.
func zooKeeperHealth(ctx context.Context, z *zkClient, h *health) {
	if data, _, err := z.Get(z.path("/controller_epoch")); err == nil {
		var n int64
		if json.Unmarshal(data, &n) == nil {
			h.ControllerEpoch = &n
		}
	}
	for _, s := range ensembleAddrs(z) {
		h.ZooKeeper = append(h.ZooKeeper, probeZooKeeper(ctx, s))
	}
}

func clusterHealth(ctx context.Context, cl *cluster) (*health, error) {
	md, err := cl.adm.Metadata(ctx)
	if err != nil {
		return nil, err
	}
	h := &health{ClusterID: md.Cluster, Controller: md.Controller}
	for _, b := range md.Brokers {
		r := brokerRow{ID: b.NodeID, Host: b.Host, Port: b.Port, Controller: b.NodeID == md.Controller}
		if b.Rack != nil {
			r.Rack = *b.Rack
		}
		h.Brokers = append(h.Brokers, r)
	}
	for _, p := range partitionInfos(md.Topics) {
		if p.unavailable() {
			h.Offline = append(h.Offline, p)
		} else if p.underReplicated() {
			h.UnderReplicated = append(h.UnderReplicated, p)
		}
	}
	if cl.zk != nil {
		zooKeeperHealth(ctx, cl.zk, h)
	}
	return h, nil
}

// fourLetterWord sends a ZooKeeper four-letter word and returns the answer.
func fourLetterWord(ctx context.Context, addr, word string) (string, error) {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// probeZooKeeper asks one server srvr and mntr.
func probeZooKeeper(ctx context.Context, addr string) zkServer {
	s := zkServer{Address: addr}
	out, err := fourLetterWord(ctx, addr, "srvr")
	if err != nil {
		s.Mode = "unreachable: " + err.Error()
		return s
	}
	if strings.Contains(out, "not in the whitelist") || strings.Contains(out, "not executed") {
		s.Mode = "unknown (srvr not allowed by 4lw.commands.whitelist)"
		return s
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Mode":
			s.Mode = v
		case "Zookeeper version":
			s.Version = v
		case "Zxid":
			s.Zxid = v
		case "Connections":
			s.Connections = v
		}
	}
	if m, err := fourLetterWord(ctx, addr, "mntr"); err == nil && strings.HasPrefix(m, "zk_") {
		s.Mntr = map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(m), "\n") {
			if k, v, ok := strings.Cut(line, "\t"); ok {
				s.Mntr[k] = v
			}
		}
	}
	return s
}

func printHealth(w io.Writer, h *health) {
	epoch := "-"
	if h.ControllerEpoch != nil {
		epoch = fmt.Sprint(*h.ControllerEpoch)
	}
	if len(h.Brokers) == 0 {
		fmt.Fprintln(w, "no brokers registered")
	} else {
		fmt.Fprintf(w, "cluster %s: %d brokers, controller %d (epoch %s)\n", h.ClusterID, len(h.Brokers), h.Controller, epoch)
	}
	if len(h.Brokers) > 0 {
		var br []table.Row
		for _, b := range h.Brokers {
			ctl := ""
			if b.Controller {
				ctl = "*"
			}
			br = append(br, table.Row{b.ID, net.JoinHostPort(b.Host, fmt.Sprint(b.Port)), b.Rack, ctl})
		}
		printTable(w, table.Row{"BROKER", "ADDRESS", "RACK", "CONTROLLER"}, br)
	}
	if len(h.ZooKeeper) > 0 {
		var zr []table.Row
		for _, s := range h.ZooKeeper {
			zr = append(zr, table.Row{s.Address, s.Mode, s.Zxid, s.Connections, s.Version})
		}
		printTable(w, table.Row{"ZOOKEEPER", "MODE", "ZXID", "CONNECTIONS", "VERSION"}, zr)
	}
	if len(h.Brokers) == 0 {
		return
	}
	fmt.Fprintf(w, "%d partitions under-replicated, %d offline\n", len(h.UnderReplicated), len(h.Offline))
	var pr []table.Row
	for _, p := range append(append([]partitionInfo(nil), h.Offline...), h.UnderReplicated...) {
		state := "under-replicated"
		if p.unavailable() {
			state = "offline"
		}
		pr = append(pr, table.Row{p.Topic, p.Part, state, p.Leader, ints(p.Replicas), ints(p.ISR)})
	}
	if len(pr) > 0 {
		printTable(w, table.Row{"TOPIC", "PARTITION", "STATE", "LEADER", "REPLICAS", "ISR"}, pr)
	}
}
