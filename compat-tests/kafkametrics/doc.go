// Package kafkametrics tests the broker's Prometheus endpoint
// (zkafka.metrics.port) with real clients: records produced and consumed
// by franz-go, a group's committed offsets, /healthz and /readyz, all
// scraped over HTTP and parsed with the Prometheus text parser.
package kafkametrics
