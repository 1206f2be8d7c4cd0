"""confluent-kafka's AdminClient against live configs: alter_configs
(Kafka's legacy AlterConfigs: the set given replaces the topic's dynamic
configs), describe_configs with each config's source, validate_only, and
Kafka's errors for an unknown config, a bad value and an unknown topic.
    python_configs.py BOOTSTRAP TOPIC
Prints [PASS]/[FAIL] lines; exits 1 on any failure."""
import sys
import time

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

boot, topic = sys.argv[1], sys.argv[2]
admin = AdminClient({"bootstrap.servers": boot})
failed = 0


def check(name, ok):
    global failed
    print(("[PASS] " if ok else "[FAIL] ") + name, flush=True)
    failed += 0 if ok else 1


def alter(configs, validate_only=False, name=None):
    res = ConfigResource(ConfigResource.Type.TOPIC, name or topic,
                         set_config=configs)
    fut = admin.alter_configs([res], request_timeout=20,
                              validate_only=validate_only)[res]
    try:
        fut.result(30)
        return None
    except KafkaException as e:
        return e.args[0]


def describe():
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return admin.describe_configs([res], request_timeout=20)[res].result(30)


def eventually(ok, seconds=15):
    """Polls describe() until ok(configs): each broker applies the change
    when it fetches the metadata, a moment after the controller commits."""
    deadline = time.monotonic() + seconds
    while True:
        d = describe()
        if ok(d) or time.monotonic() > deadline:
            return d
        time.sleep(0.1)


err = alter({"retention.ms": "3600000", "cleanup.policy": "delete"})
check("alter_configs sets retention.ms and cleanup.policy (%s)" % err,
      err is None)
d = eventually(lambda d: d["retention.ms"].value == "3600000")
check("describe shows retention.ms=3600000 as DYNAMIC_TOPIC_CONFIG",
      d["retention.ms"].value == "3600000" and
      d["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
check("an unset config is DEFAULT_CONFIG (segment.ms)",
      d["segment.ms"].source == ConfigSource.DEFAULT_CONFIG.value)

err = alter({"retention.ms": "60000"}, validate_only=True)
check("validate_only succeeds (%s)" % err, err is None)
check("validate_only changes nothing",
      describe()["retention.ms"].value == "3600000")

err = alter({"segment.ms": "120000"})
d = eventually(lambda d: d["segment.ms"].value == "120000")
check("AlterConfigs replaces the whole set: segment.ms set, retention.ms "
      "back to the default",
      err is None and d["segment.ms"].value == "120000" and
      d["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value)

err = alter({"no.such.config": "1"})
check("an unknown config is INVALID_CONFIG (%s)" % err,
      err is not None and err.name() == "INVALID_CONFIG" and
      "no.such.config" in err.str())
err = alter({"retention.ms": "soon"})
check("a bad value is INVALID_CONFIG naming it (%s)" % err,
      err is not None and err.name() == "INVALID_CONFIG" and
      "retention.ms" in err.str())
err = alter({"retention.ms": "1"}, name="no-such-topic")
check("an unknown topic is UNKNOWN_TOPIC_OR_PART (%s)" % err,
      err is not None and err.name() == "UNKNOWN_TOPIC_OR_PART")
sys.exit(1 if failed else 0)
