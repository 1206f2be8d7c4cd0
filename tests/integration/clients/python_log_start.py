"""What a client sees of a partition's log start offset, with
confluent-kafka: the low watermark (ListOffsets earliest), the first
record a consumer reading from the beginning gets, and a fetch below the
log start (OFFSET_OUT_OF_RANGE, which librdkafka reports as
_AUTO_OFFSET_RESET when auto.offset.reset=error).

    python_log_start.py BOOTSTRAP TOPIC EXPECTED_START
Prints what it saw; exit 0 when all three agree with EXPECTED_START.
"""
import sys

from confluent_kafka import Consumer, KafkaError, TopicPartition


def consumer(boot, reset):
    return Consumer({"bootstrap.servers": boot, "group.id": "log-start-check",
                     "enable.auto.commit": False,
                     "auto.offset.reset": reset})


def main():
    boot, topic, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    c = consumer(boot, "earliest")
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    print("watermarks low=%d high=%d" % (low, high))
    c.assign([TopicPartition(topic, 0, -2)])  # OFFSET_BEGINNING
    first = None
    for _ in range(30):
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            first = m.offset()
            break
    c.close()
    print("from the beginning, the first record is at offset %s" % first)
    c = consumer(boot, "error")
    c.assign([TopicPartition(topic, 0, max(want - 1, 0))])
    below = None
    for _ in range(30):
        m = c.poll(1.0)
        if m is not None:
            below = m.error().code() if m.error() else "record %d" % m.offset()
            break
    c.close()
    print("fetch at %d: %s" % (max(want - 1, 0), below))
    ok = (low == want and first == want and
          below == KafkaError._AUTO_OFFSET_RESET)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
