package zkafkatest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// ControlHandler serves the cluster's faults over HTTP, JSON in and JSON
// out, for tests written in other languages (`zkafka run --control`):
//
//	GET    /cluster                             members, addresses, controller, links
//	POST   /brokers/{id}/{action}               action: stop kill start restart pause resume cut heal
//	POST   /zookeeper/{id}/{action}             the same for ZooKeeper server myid id
//	POST   /zookeeper/sessions/{session}/expire session id in hex (0x...) or decimal
//	POST   /controller                          {"broker": 2}: MoveController
//	POST   /topics/{topic}/partitions/{p}/leader {"broker": 2}: MoveLeader
//	POST   /intercept                           a Kafka rule (below); answers {"id": n}
//	POST   /zookeeper/intercept                 a ZooKeeper rule; answers {"id": n}
//	GET    /intercept                           every rule with its hits
//	DELETE /intercept/{id}                      removes a rule (either kind)
//	POST   /heal                                heals every cut, resumes every member
//
// cut and heal without a body act between the clients and the member;
// with {"peer": "zookeeper-1"} between the member and that peer
// ("broker-2": between two brokers; "brokers": every broker's link to a
// broker). A Kafka
// rule is {"api_key": 0, "error_code": 6, "count": 2, "delay_ms": 0,
// "drop": false, "brokers": [1]} (api_key absent: any request; count 0:
// until deleted); a ZooKeeper rule has "op" (an opcode) instead of
// "api_key", "servers" and "sessions" instead of "brokers". Rules act in
// the order added, as KafkaRule says. Errors answer {"error": "..."} with
// status 400 (a bad request), 404 (no such member or rule) or 409 (the
// fault failed).
func ControlHandler(c *Cluster) http.Handler {
	h := &control{c: c, rules: map[int]*controlRule{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cluster", h.cluster)
	mux.HandleFunc("POST /brokers/{id}/{action}", h.member(KindBroker))
	mux.HandleFunc("POST /zookeeper/{id}/{action}", h.member(KindZooKeeper))
	mux.HandleFunc("POST /zookeeper/sessions/{session}/expire", h.expire)
	mux.HandleFunc("POST /controller", h.moveController)
	mux.HandleFunc("POST /topics/{topic}/partitions/{p}/leader", h.moveLeader)
	mux.HandleFunc("POST /intercept", h.interceptKafka)
	mux.HandleFunc("POST /zookeeper/intercept", h.interceptZooKeeper)
	mux.HandleFunc("GET /intercept", h.listRules)
	mux.HandleFunc("DELETE /intercept/{id}", h.deleteRule)
	mux.HandleFunc("POST /heal", func(w http.ResponseWriter, r *http.Request) {
		c.HealAll()
		reply(w, http.StatusOK, map[string]bool{"ok": true})
	})
	return mux
}

type control struct {
	c  *Cluster
	mu sync.Mutex
	// rules are the rules added over HTTP, by id.
	rules  map[int]*controlRule
	nextID int
}

type controlRule struct {
	ID   int    `json:"id"`
	Kind string `json:"kind"` // "kafka" or "zookeeper"
	Rule any    `json:"rule"`
	Hits int    `json:"hits"`
	hook *Hook
}

// httpError is an error with its status.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }

func bad(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// answer replies v, or err with its status (409 for a fault that failed).
func answer(w http.ResponseWriter, v any, err error) {
	if err == nil {
		reply(w, http.StatusOK, v)
		return
	}
	status := http.StatusConflict
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	reply(w, status, map[string]string{"error": err.Error()})
}

// ClusterState is GET /cluster's answer.
type ClusterState struct {
	ZooKeeper        string        `json:"zookeeper"` // the connect string
	Bootstrap        string        `json:"bootstrap"` // bootstrap.servers
	Brokers          []MemberState `json:"brokers"`
	ZooKeeperServers []MemberState `json:"zookeeper_servers"`
	Controller       int32         `json:"controller"` // -1: none
	Links            []LinkState   `json:"links"`
}

// MemberState is one member in ClusterState.
type MemberState struct {
	ID      int32  `json:"id"`
	Addr    string `json:"addr"`
	Running bool   `json:"running"`
}

// State reports the cluster's members, addresses and links.
func (c *Cluster) State() ClusterState {
	st := ClusterState{ZooKeeper: c.ZooKeeper(), Bootstrap: c.Bootstrap(), Links: c.Links(), Controller: -1}
	for _, id := range c.BrokerIDs() {
		addr, _ := c.Addr(Broker(id))
		st.Brokers = append(st.Brokers, MemberState{ID: id, Addr: addr, Running: c.Running(Broker(id))})
	}
	for i := range c.zks {
		m := ZooKeeperServer(int32(i + 1))
		addr, _ := c.Addr(m)
		st.ZooKeeperServers = append(st.ZooKeeperServers, MemberState{ID: m.ID, Addr: addr, Running: c.Running(m)})
	}
	if len(st.Brokers) > 0 {
		if id, err := c.Controller(); err == nil {
			st.Controller = id
		}
	}
	return st
}

func (h *control) cluster(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, h.c.State())
}

func (h *control) member(kind Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 32)
		m := Member{Kind: kind, ID: int32(id)}
		if err != nil || !h.c.isMember(m) {
			answer(w, nil, &httpError{http.StatusNotFound, fmt.Errorf("no member %s-%s", kind, r.PathValue("id"))})
			return
		}
		answer(w, map[string]any{"ok": true, "member": m.String()}, h.act(m, r))
	}
}

func (h *control) act(m Member, r *http.Request) error {
	switch action := r.PathValue("action"); action {
	case "stop":
		return h.c.Stop(m)
	case "kill":
		return h.c.Kill(m)
	case "start":
		return h.c.StartMember(m)
	case "restart":
		return h.c.Restart(m)
	case "pause":
		return h.c.Pause(m)
	case "resume":
		return h.c.Resume(m)
	case "cut", "heal":
		var body struct {
			Peer string `json:"peer"`
		}
		if err := decode(r, &body); err != nil {
			return err
		}
		peer := Clients
		if body.Peer != "" {
			var err error
			if peer, err = ParseMember(body.Peer); err != nil {
				return bad("%v", err)
			}
		}
		if action == "cut" {
			return h.c.Cut(peer, m)
		}
		return h.c.Heal(peer, m)
	default:
		return &httpError{http.StatusNotFound, fmt.Errorf("no action %q (stop kill start restart pause resume cut heal)", action)}
	}
}

// decode reads a JSON body into v; an empty body leaves v as it is.
func decode(r *http.Request, v any) error {
	if r.Body == nil || r.ContentLength == 0 {
		return nil
	}
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad("the JSON body: %v", err)
	}
	return nil
}

func (h *control) expire(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("session"), 0, 64)
	if err != nil {
		answer(w, nil, bad("session %q: want 0x<hex> or a decimal id", r.PathValue("session")))
		return
	}
	answer(w, map[string]bool{"ok": true}, h.c.ExpireSession(id))
}

func (h *control) moveController(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Broker *int32 `json:"broker"`
	}
	if err := decode(r, &body); err != nil || body.Broker == nil {
		answer(w, nil, errors.Join(err, bad(`want {"broker": id}`)))
		return
	}
	answer(w, map[string]bool{"ok": true}, h.c.MoveController(*body.Broker))
}

func (h *control) moveLeader(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Broker *int32 `json:"broker"`
	}
	p, err := strconv.ParseInt(r.PathValue("p"), 10, 32)
	if err != nil {
		answer(w, nil, bad("partition %q", r.PathValue("p")))
		return
	}
	if err := decode(r, &body); err != nil || body.Broker == nil {
		answer(w, nil, errors.Join(err, bad(`want {"broker": id}`)))
		return
	}
	answer(w, map[string]bool{"ok": true}, h.c.MoveLeader(r.PathValue("topic"), int32(p), *body.Broker))
}

// kafkaRuleJSON is a KafkaRule over HTTP.
type kafkaRuleJSON struct {
	APIKey    *int16  `json:"api_key,omitempty"`
	Brokers   []int32 `json:"brokers,omitempty"`
	Count     int     `json:"count"`
	DelayMs   int     `json:"delay_ms,omitempty"`
	Drop      bool    `json:"drop,omitempty"`
	ErrorCode int16   `json:"error_code,omitempty"`
}

func (j *kafkaRuleJSON) counts() (count, delayMs int) { return j.Count, j.DelayMs }

// zkRuleJSON is a ZooKeeperRule over HTTP.
type zkRuleJSON struct {
	Op        *int32  `json:"op,omitempty"`
	Servers   []int32 `json:"servers,omitempty"`
	Sessions  []int64 `json:"sessions,omitempty"`
	Count     int     `json:"count"`
	DelayMs   int     `json:"delay_ms,omitempty"`
	Drop      bool    `json:"drop,omitempty"`
	ErrorCode int32   `json:"error_code,omitempty"`
}

func (j *zkRuleJSON) counts() (count, delayMs int) { return j.Count, j.DelayMs }

// ruleJSON is an interception rule's HTTP body, whose count and delay are
// checked the same way for each kind.
type ruleJSON interface{ counts() (count, delayMs int) }

// decodeRule decodes r's body into j, refusing a negative count or delay.
func decodeRule(r *http.Request, j ruleJSON) error {
	if err := decode(r, j); err != nil {
		return err
	}
	if count, delay := j.counts(); count < 0 || delay < 0 {
		return bad("count and delay_ms must be >= 0")
	}
	return nil
}

func (h *control) interceptKafka(w http.ResponseWriter, r *http.Request) {
	var j kafkaRuleJSON
	if err := decodeRule(r, &j); err != nil {
		answer(w, nil, err)
		return
	}
	rule := KafkaRule{Brokers: j.Brokers, Count: j.Count, Delay: time.Duration(j.DelayMs) * time.Millisecond,
		Drop: j.Drop, ErrorCode: j.ErrorCode}
	if j.APIKey != nil {
		rule.Keys = []int16{*j.APIKey}
	}
	h.add(w, "kafka", j, h.c.InterceptKafka(rule))
}

func (h *control) interceptZooKeeper(w http.ResponseWriter, r *http.Request) {
	var j zkRuleJSON
	if err := decodeRule(r, &j); err != nil {
		answer(w, nil, err)
		return
	}
	rule := ZooKeeperRule{Servers: j.Servers, Sessions: j.Sessions, Count: j.Count,
		Delay: time.Duration(j.DelayMs) * time.Millisecond, Drop: j.Drop, ErrorCode: j.ErrorCode}
	if j.Op != nil {
		rule.Ops = []int32{*j.Op}
	}
	h.add(w, "zookeeper", j, h.c.InterceptZooKeeper(rule))
}

func (h *control) add(w http.ResponseWriter, kind string, rule any, hook *Hook) {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.rules[id] = &controlRule{ID: id, Kind: kind, Rule: rule, hook: hook}
	h.mu.Unlock()
	reply(w, http.StatusOK, map[string]int{"id": id})
}

func (h *control) listRules(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	out := []controlRule{}
	for _, cr := range h.rules {
		c := *cr
		c.Hits = cr.hook.Hits()
		out = append(out, c)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	reply(w, http.StatusOK, out)
}

func (h *control) deleteRule(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	h.mu.Lock()
	cr, ok := h.rules[id]
	delete(h.rules, id)
	h.mu.Unlock()
	if !ok {
		answer(w, nil, &httpError{http.StatusNotFound, fmt.Errorf("no rule %s", r.PathValue("id"))})
		return
	}
	cr.hook.Remove()
	reply(w, http.StatusOK, map[string]any{"ok": true, "hits": cr.hook.Hits()})
}
