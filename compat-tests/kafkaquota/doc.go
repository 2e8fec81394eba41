// Package kafkaquota tests zkafka's client quotas through real clients:
// franz-go's kadm (AlterClientQuotas, DescribeClientQuotas) and kgo
// (producers and consumers held to producer_byte_rate and
// consumer_byte_rate, the throttle times they are told), on an in-process
// cluster (package zkafkatest) over real sockets; and, under the compat
// build tag, kafka-python's admin client.
package kafkaquota
