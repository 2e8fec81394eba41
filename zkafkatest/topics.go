package zkafkatest

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// CreateTopics creates topics and waits until each of their partitions
// has a leader in every running broker's metadata.
func (c *Cluster) CreateTopics(specs ...TopicSpec) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.createTopics(specs)
}

func (c *Cluster) createTopics(specs []TopicSpec) error {
	if len(specs) == 0 {
		return nil
	}
	if len(c.brokers) == 0 {
		return fmt.Errorf("zkafkatest: topics need brokers")
	}
	kc, err := c.client()
	if err != nil {
		return err
	}
	defer kc.Close()
	adm := kadm.NewClient(kc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range specs {
		configs := map[string]*string{}
		for k, v := range s.Configs {
			configs[k] = &v
		}
		resp, err := adm.CreateTopic(ctx, s.Partitions, s.ReplicationFactor, configs, s.Name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("zkafkatest: creating topic %s: %w", s.Name, err)
		}
	}
	return c.waitLeaders(specs, 30*time.Second)
}

// waitLeaders waits until every running broker's metadata gives each
// partition of the topics a leader.
func (c *Cluster) waitLeaders(specs []TopicSpec, limit time.Duration) error {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	for _, b := range c.brokers {
		if b.b == nil {
			continue
		}
		err := c.onBroker(b.id, func(adm *kadm.Client) error {
			return poll(limit, func() (bool, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				md, err := adm.Metadata(ctx, names...)
				if err != nil {
					return false, err
				}
				for _, s := range specs {
					t, ok := md.Topics[s.Name]
					if !ok || t.Err != nil || len(t.Partitions) != int(s.Partitions) {
						return false, nil
					}
					for _, p := range t.Partitions {
						if p.Leader < 0 || p.Err != nil {
							return false, nil
						}
					}
				}
				return true, nil
			})
		})
		if err != nil {
			return fmt.Errorf("zkafkatest: broker %d never saw leaders for %v: %w", b.id, names, err)
		}
	}
	return nil
}
