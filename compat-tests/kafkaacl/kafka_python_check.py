#!/usr/bin/env python3
"""kafka-python (2.0) against a broker with the ACL authorizer, over SSL with
client certificates: its admin client's CreateAcls / DescribeAcls /
DeleteAcls (v0-1: literal and prefixed), and its producer refused, allowed,
then refused again as the ACLs change.

usage: kafka_python_check.py BOOTSTRAP CA_PEM ADMIN_PEM ALICE_PEM TOPIC
"""
import sys

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient
from kafka.admin.acl_resource import (ACL, ACLFilter, ACLOperation, ACLPermissionType,
                                      ACLResourcePatternType, ResourcePattern,
                                      ResourcePatternFilter, ResourceType)
from kafka.errors import TopicAuthorizationFailedError

bootstrap, ca, admin_pem, alice_pem, topic = sys.argv[1:6]
ALICE = "User:CN=alice,O=zkafka"


def ssl(pem):
    return dict(bootstrap_servers=bootstrap, security_protocol="SSL", ssl_cafile=ca,
                ssl_certfile=pem, ssl_keyfile=pem, request_timeout_ms=15000)


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def produce(expect_denied):
    p = KafkaProducer(retries=0, max_block_ms=15000, **ssl(alice_pem))
    try:
        p.send(topic, b"v").get(timeout=15)
        check(not expect_denied, "alice's produce was accepted without WRITE")
    except TopicAuthorizationFailedError:
        check(expect_denied, "alice's produce was refused with WRITE")
    finally:
        p.close()


admin = KafkaAdminClient(**ssl(admin_pem))
describe = ACL(ALICE, "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW,
               ResourcePattern(ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL))
res = admin.create_acls([describe])
check(len(res["succeeded"]) == 1 and not res["failed"], "create DESCRIBE: %r" % res)
produce(expect_denied=True)

write = ACL(ALICE, "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
            ResourcePattern(ResourceType.TOPIC, topic[:3], ACLResourcePatternType.PREFIXED))
res = admin.create_acls([write])
check(len(res["succeeded"]) == 1 and not res["failed"], "create prefixed WRITE: %r" % res)
produce(expect_denied=False)

acls, err = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                          ResourcePatternFilter(ResourceType.TOPIC, topic,
                                                                ACLResourcePatternType.MATCH)))
got = sorted((a.operation.name, a.resource_pattern.pattern_type.name, a.resource_pattern.resource_name)
             for a in acls)
check(err.errno == 0 and got == [("DESCRIBE", "LITERAL", topic), ("WRITE", "PREFIXED", topic[:3])],
      "describe MATCH: %r %r" % (got, err))

res = admin.delete_acls([ACLFilter(ALICE, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                   ResourcePatternFilter(ResourceType.TOPIC, topic[:3],
                                                         ACLResourcePatternType.PREFIXED))])
deleted = res[0][1]
check(len(deleted) == 1 and deleted[0][0].operation == ACLOperation.WRITE, "delete prefixed: %r" % res)
produce(expect_denied=True)

# Not a super user: CLUSTER ALTER is needed to create ACLs.
alice_admin = KafkaAdminClient(**ssl(alice_pem))
res = alice_admin.create_acls([write])
check(not res["succeeded"] and len(res["failed"]) == 1, "alice created an ACL: %r" % res)
print("OK")
