package kproto

import "strconv"

// ErrorCode is a Kafka protocol error code, as carried in response error
// fields. Values and names are Kafka's (org.apache.kafka.common.protocol.Errors);
// the test TestErrorCodesMatchKerr checks them against franz-go's kerr.
type ErrorCode int16

// Error codes the broker may return.
const (
	CodeUnknownServerError           ErrorCode = -1
	CodeNone                         ErrorCode = 0
	CodeOffsetOutOfRange             ErrorCode = 1
	CodeCorruptMessage               ErrorCode = 2
	CodeUnknownTopicOrPartition      ErrorCode = 3
	CodeInvalidFetchSize             ErrorCode = 4
	CodeLeaderNotAvailable           ErrorCode = 5
	CodeNotLeaderOrFollower          ErrorCode = 6
	CodeRequestTimedOut              ErrorCode = 7
	CodeMessageTooLarge              ErrorCode = 10
	CodeCoordinatorLoadInProgress    ErrorCode = 14
	CodeCoordinatorNotAvailable      ErrorCode = 15
	CodeNotCoordinator               ErrorCode = 16
	CodeInvalidTopicException        ErrorCode = 17
	CodeRecordListTooLarge           ErrorCode = 18
	CodeNotEnoughReplicas            ErrorCode = 19
	CodeNotEnoughReplicasAfterAppend ErrorCode = 20
	CodeInvalidRequiredAcks          ErrorCode = 21
	CodeIllegalGeneration            ErrorCode = 22
	CodeInconsistentGroupProtocol    ErrorCode = 23
	CodeInvalidGroupID               ErrorCode = 24
	CodeUnknownMemberID              ErrorCode = 25
	CodeInvalidSessionTimeout        ErrorCode = 26
	CodeRebalanceInProgress          ErrorCode = 27
	CodeInvalidCommitOffsetSize      ErrorCode = 28
	CodeTopicAuthorizationFailed     ErrorCode = 29
	CodeGroupAuthorizationFailed     ErrorCode = 30
	CodeClusterAuthorizationFailed   ErrorCode = 31
	CodeInvalidTimestamp             ErrorCode = 32
	CodeUnsupportedSaslMechanism     ErrorCode = 33
	CodeIllegalSaslState             ErrorCode = 34
	CodeUnsupportedVersion           ErrorCode = 35
	CodeTopicAlreadyExists           ErrorCode = 36
	CodeInvalidPartitions            ErrorCode = 37
	CodeInvalidReplicationFactor     ErrorCode = 38
	CodeInvalidReplicaAssignment     ErrorCode = 39
	CodeInvalidConfig                ErrorCode = 40
	CodeNotController                ErrorCode = 41
	CodeInvalidRequest               ErrorCode = 42
	CodeUnsupportedForMessageFormat  ErrorCode = 43
	CodePolicyViolation              ErrorCode = 44
	CodeOutOfOrderSequenceNumber     ErrorCode = 45
	CodeDuplicateSequenceNumber      ErrorCode = 46
	CodeInvalidProducerEpoch         ErrorCode = 47
	CodeInvalidTxnState              ErrorCode = 48
	CodeInvalidProducerIDMapping     ErrorCode = 49
	CodeInvalidTransactionTimeout    ErrorCode = 50
	CodeConcurrentTransactions       ErrorCode = 51
	CodeKafkaStorageError            ErrorCode = 56
	CodeUnknownProducerID            ErrorCode = 59
	CodeNonEmptyGroup                ErrorCode = 68
	CodeGroupIDNotFound              ErrorCode = 69
	CodeFetchSessionIDNotFound       ErrorCode = 70
	CodeInvalidFetchSessionEpoch     ErrorCode = 71
	CodeFencedLeaderEpoch            ErrorCode = 74
	CodeUnknownLeaderEpoch           ErrorCode = 75
	CodeOffsetNotAvailable           ErrorCode = 78
	CodeMemberIDRequired             ErrorCode = 79
	CodeGroupMaxSizeReached          ErrorCode = 81
	CodeFencedInstanceID             ErrorCode = 82
	CodeInvalidRecord                ErrorCode = 87
	CodeUnstableOffsetCommit         ErrorCode = 88
	CodeUnknownTopicID               ErrorCode = 100
	CodeInconsistentTopicID          ErrorCode = 103
)

var errorNames = map[ErrorCode]string{
	CodeUnknownServerError:           "UNKNOWN_SERVER_ERROR",
	CodeNone:                         "NONE",
	CodeOffsetOutOfRange:             "OFFSET_OUT_OF_RANGE",
	CodeCorruptMessage:               "CORRUPT_MESSAGE",
	CodeUnknownTopicOrPartition:      "UNKNOWN_TOPIC_OR_PARTITION",
	CodeInvalidFetchSize:             "INVALID_FETCH_SIZE",
	CodeLeaderNotAvailable:           "LEADER_NOT_AVAILABLE",
	CodeNotLeaderOrFollower:          "NOT_LEADER_OR_FOLLOWER",
	CodeRequestTimedOut:              "REQUEST_TIMED_OUT",
	CodeMessageTooLarge:              "MESSAGE_TOO_LARGE",
	CodeCoordinatorLoadInProgress:    "COORDINATOR_LOAD_IN_PROGRESS",
	CodeCoordinatorNotAvailable:      "COORDINATOR_NOT_AVAILABLE",
	CodeNotCoordinator:               "NOT_COORDINATOR",
	CodeInvalidTopicException:        "INVALID_TOPIC_EXCEPTION",
	CodeRecordListTooLarge:           "RECORD_LIST_TOO_LARGE",
	CodeNotEnoughReplicas:            "NOT_ENOUGH_REPLICAS",
	CodeNotEnoughReplicasAfterAppend: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	CodeInvalidRequiredAcks:          "INVALID_REQUIRED_ACKS",
	CodeIllegalGeneration:            "ILLEGAL_GENERATION",
	CodeInconsistentGroupProtocol:    "INCONSISTENT_GROUP_PROTOCOL",
	CodeInvalidGroupID:               "INVALID_GROUP_ID",
	CodeUnknownMemberID:              "UNKNOWN_MEMBER_ID",
	CodeInvalidSessionTimeout:        "INVALID_SESSION_TIMEOUT",
	CodeRebalanceInProgress:          "REBALANCE_IN_PROGRESS",
	CodeInvalidCommitOffsetSize:      "INVALID_COMMIT_OFFSET_SIZE",
	CodeTopicAuthorizationFailed:     "TOPIC_AUTHORIZATION_FAILED",
	CodeGroupAuthorizationFailed:     "GROUP_AUTHORIZATION_FAILED",
	CodeClusterAuthorizationFailed:   "CLUSTER_AUTHORIZATION_FAILED",
	CodeInvalidTimestamp:             "INVALID_TIMESTAMP",
	CodeUnsupportedSaslMechanism:     "UNSUPPORTED_SASL_MECHANISM",
	CodeIllegalSaslState:             "ILLEGAL_SASL_STATE",
	CodeUnsupportedVersion:           "UNSUPPORTED_VERSION",
	CodeTopicAlreadyExists:           "TOPIC_ALREADY_EXISTS",
	CodeInvalidPartitions:            "INVALID_PARTITIONS",
	CodeInvalidReplicationFactor:     "INVALID_REPLICATION_FACTOR",
	CodeInvalidReplicaAssignment:     "INVALID_REPLICA_ASSIGNMENT",
	CodeInvalidConfig:                "INVALID_CONFIG",
	CodeNotController:                "NOT_CONTROLLER",
	CodeInvalidRequest:               "INVALID_REQUEST",
	CodeUnsupportedForMessageFormat:  "UNSUPPORTED_FOR_MESSAGE_FORMAT",
	CodePolicyViolation:              "POLICY_VIOLATION",
	CodeOutOfOrderSequenceNumber:     "OUT_OF_ORDER_SEQUENCE_NUMBER",
	CodeDuplicateSequenceNumber:      "DUPLICATE_SEQUENCE_NUMBER",
	CodeInvalidProducerEpoch:         "INVALID_PRODUCER_EPOCH",
	CodeInvalidTxnState:              "INVALID_TXN_STATE",
	CodeInvalidProducerIDMapping:     "INVALID_PRODUCER_ID_MAPPING",
	CodeInvalidTransactionTimeout:    "INVALID_TRANSACTION_TIMEOUT",
	CodeConcurrentTransactions:       "CONCURRENT_TRANSACTIONS",
	CodeKafkaStorageError:            "KAFKA_STORAGE_ERROR",
	CodeUnknownProducerID:            "UNKNOWN_PRODUCER_ID",
	CodeNonEmptyGroup:                "NON_EMPTY_GROUP",
	CodeGroupIDNotFound:              "GROUP_ID_NOT_FOUND",
	CodeFetchSessionIDNotFound:       "FETCH_SESSION_ID_NOT_FOUND",
	CodeInvalidFetchSessionEpoch:     "INVALID_FETCH_SESSION_EPOCH",
	CodeFencedLeaderEpoch:            "FENCED_LEADER_EPOCH",
	CodeUnknownLeaderEpoch:           "UNKNOWN_LEADER_EPOCH",
	CodeOffsetNotAvailable:           "OFFSET_NOT_AVAILABLE",
	CodeMemberIDRequired:             "MEMBER_ID_REQUIRED",
	CodeGroupMaxSizeReached:          "GROUP_MAX_SIZE_REACHED",
	CodeFencedInstanceID:             "FENCED_INSTANCE_ID",
	CodeInvalidRecord:                "INVALID_RECORD",
	CodeUnstableOffsetCommit:         "UNSTABLE_OFFSET_COMMIT",
	CodeUnknownTopicID:               "UNKNOWN_TOPIC_ID",
	CodeInconsistentTopicID:          "INCONSISTENT_TOPIC_ID",
}

// String returns Kafka's name for the code, such as "UNSUPPORTED_VERSION".
func (c ErrorCode) String() string {
	if s, ok := errorNames[c]; ok {
		return s
	}
	return "ERROR_CODE_" + strconv.Itoa(int(c))
}

// Retriable reports whether clients retry on this code (the subset of Kafka's
// RetriableException codes listed here).
func (c ErrorCode) Retriable() bool {
	switch c {
	case CodeCorruptMessage, CodeUnknownTopicOrPartition, CodeLeaderNotAvailable,
		CodeNotLeaderOrFollower, CodeRequestTimedOut, CodeCoordinatorLoadInProgress,
		CodeCoordinatorNotAvailable, CodeNotCoordinator, CodeNotEnoughReplicas,
		CodeNotEnoughReplicasAfterAppend, CodeNotController,
		CodeKafkaStorageError, CodeFetchSessionIDNotFound, CodeInvalidFetchSessionEpoch,
		CodeFencedLeaderEpoch, CodeUnknownLeaderEpoch, CodeOffsetNotAvailable,
		CodeUnstableOffsetCommit, CodeUnknownTopicID, CodeInconsistentTopicID:
		return true
	}
	return false
}
