/* Every bound in Cairn, with its reason. A queue or buffer that is not
 * bounded here is a bug. Relations between bounds are asserted at compile
 * time at the bottom. */
#ifndef CAIRN_COMMON_LIMITS_H
#define CAIRN_COMMON_LIMITS_H

/* --- Kafka wire protocol ------------------------------------------------ */

/* Kafka's socket.request.max.bytes default; a larger frame is refused
 * before any allocation. */
#define REQUEST_BYTES_MAX (100u * 1024 * 1024)

/* Kafka strings carry an int16 length. */
#define KAFKA_STRING_BYTES_MAX 32767u

/* A decoded array count is never trusted for allocation beyond this; the
 * reader also checks it against the bytes actually left in the frame. */
#define KAFKA_ARRAY_COUNT_MAX (1u << 20)

/* --- RecordBatch v2 ----------------------------------------------------- */

/* Fixed header of a v2 batch: baseOffset .. recordCount. */
#define BATCH_HEADER_BYTES 61u

/* Kafka's message.max.bytes default is 1048588; we accept batches up to
 * this, which also bounds a follower's single-batch read. */
#define BATCH_BYTES_MAX (16u * 1024 * 1024)

/* --- Produced records (common/kafka/record_validate.h) ----------------- */

/* Decoded bytes one decoder call hands the record walker: one reusable
 * buffer that several 64 KiB LZ4 blocks (Kafka's and librdkafka's
 * default) decode straight into. Measured on 1 KiB text records: liblz4
 * decodes at 2.3 GB/s into 64 KiB at a time, 2.7 into 128 KiB, 3.0 into
 * 256 KiB, and slower again from 1 MiB (out of the cache). */
#define RECORD_INFLATE_WINDOW_BYTES (256u * 1024)

/* Records of one produced batch after decompression. A batch inflating
 * past this is refused (CORRUPT_MESSAGE) as a decompression bomb: 128 x
 * Kafka's default max.message.bytes, while producers bound a batch by its
 * uncompressed size (librdkafka's batch.size 1 MB, the Java producer's 16
 * KiB, both under a 1 MB message.max.bytes / max.request.size). It also
 * bounds the loop thread's time on one batch (about 0.1 s at 1 GB/s). */
#define RECORD_INFLATED_BYTES_MAX (128u * 1024 * 1024)

/* Decoder memory kept from one batch to the next. A zstd window or a raw
 * snappy block that needed more for one batch is freed after it, so one
 * odd producer does not pin that memory for the broker's lifetime. */
#define RECORD_INFLATE_KEEP_BYTES (8u * 1024 * 1024)

_Static_assert(RECORD_INFLATE_WINDOW_BYTES <= RECORD_INFLATE_KEEP_BYTES,
               "the window is kept");

/* --- Partition log ------------------------------------------------------ */

/* Positions inside a segment are int32 in the .index file, as in Kafka. */
#define LOG_SEGMENT_BYTES_MAX 0x7fffffffu

/* Smallest segment Kafka accepts (LogConfig: segment.bytes >= 14). */
#define LOG_SEGMENT_BYTES_MIN 14u

/* Index entries kept in memory per segment; Kafka's segment.index.bytes
 * default (10 MiB) over 8-byte entries. A full index rolls the segment. */
#define LOG_INDEX_ENTRIES_MAX (10u * 1024 * 1024 / 8)

/* Durability waiters queued on one log; above this, appenders get RC_FULL
 * and the caller answers the client with an error instead of growing. */
#define LOG_SYNC_WAITERS_MAX 65536u

/* Bytes read per pread() while scanning batch headers (recovery, index
 * lookups); one read covers many small batches. */
#define LOG_SCAN_BUFFER_BYTES (64u * 1024)

/* First read of a scan: a lookup landing on an index entry needs only one
 * header; later reads double up to LOG_SCAN_BUFFER_BYTES. */
#define LOG_SCAN_FIRST_READ_BYTES 4096u

/* The start-up check (broker/log/log_startup.h): bytes one job on the
 * threadpool checks before it hands back to the loop, so a log_close()
 * waits for that much at most (a few ms from the page cache, tens from a
 * cold disk), and the buffer it reads through, one per broker. */
#define LOG_STARTUP_CHUNK_BYTES (4u * 1024 * 1024)
#define LOG_STARTUP_BUFFER_BYTES (1024u * 1024)

/* Entries in a leader-epoch checkpoint: one per leader change that wrote
 * data, so a partition changing leader every minute for two years fits. */
#define LOG_EPOCH_ENTRIES_MAX (1u << 20)

/* Longest path we build for partition files. */
#define LOG_PATH_BYTES_MAX 4096u

/* Produce requests waiting for one partition's high watermark; beyond it
 * the producer gets an error (it has more in flight than any client
 * keeps). */
#define PARTITION_WAITERS_MAX 65536u

/* Admin answers one broker holds until its metadata image has the change
 * the controller made (broker/image_wait.h); beyond it an answer goes out
 * at once, without the wait. Each holds its request's arena and the
 * controller's answer, and admin requests are rare. */
#define IMAGE_WAITERS_MAX 1024u

/* --- Idempotent producers ----------------------------------------------- */

/* Producer ids whose state one partition keeps (broker/log/producer_state.h).
 * Kafka bounds them by time instead (producer.id.expiration.ms, one day);
 * here, when a new id arrives and the table is full, the producer whose
 * newest batch has the lowest offset (the least recently used) is
 * forgotten. A forgotten producer is unknown again, and an unknown
 * producer is accepted with any sequence, so eviction only costs the
 * duplicate check of an idle producer. Every restart of an idempotent
 * client takes a new id, so ids accumulate; 4096 covers a day of a few
 * hundred restarting producers per partition. An entry is ~140 bytes, so
 * a full table costs ~560 KiB, allocated only as producers appear. */
#define PRODUCERS_MAX 4096u

/* Batches remembered per producer for duplicate detection: librdkafka and
 * kafkajs keep at most 5 requests in flight with idempotence, and Kafka's
 * ProducerStateEntry keeps the same 5. */
#define PRODUCER_BATCHES_MAX 5u

/* A producer-state snapshot: a 16-byte header and a 4-byte CRC around one
 * entry per producer (id 8, epoch 2, batch count 1, and 24 per batch). A
 * larger file is not ours and is refused as corrupt before any parsing. */
#define PRODUCER_SNAPSHOT_ENTRY_BYTES_MAX (11u + 24u * PRODUCER_BATCHES_MAX)
#define PRODUCER_SNAPSHOT_BYTES_MAX                                    \
    (20u + PRODUCERS_MAX * PRODUCER_SNAPSHOT_ENTRY_BYTES_MAX)

_Static_assert(PRODUCER_BATCHES_MAX >= 1u && PRODUCER_BATCHES_MAX <= 127u,
               "the batch count is one signed byte in a snapshot");
_Static_assert(PRODUCERS_MAX >= 1u && PRODUCERS_MAX <= 0x7fffffffu,
               "the producer count is a 4-byte field in a snapshot");
_Static_assert(PRODUCER_SNAPSHOT_BYTES_MAX <= 64u * 1024 * 1024,
               "a snapshot is read whole into memory at open");

/* --- Cluster metadata --------------------------------------------------- */

/* Replicas of one partition; Kafka has no hard limit, but a replica set is
 * a fixed array here and no local cluster needs more. */
#define META_REPLICAS_MAX 16

/* Kafka's topic name limit (Topic.MAX_NAME_LENGTH). */
#define META_TOPIC_NAME_BYTES_MAX 249u

/* A hostname (RFC 1035) and a rack id. */
#define META_HOST_BYTES_MAX 255u
#define META_RACK_BYTES_MAX 255u

/* A config key and value, as kept in the metadata log. */
#define META_CONFIG_NAME_BYTES_MAX 255u
#define META_CONFIG_VALUE_BYTES_MAX 1023u

/* Partitions of one topic; CreateTopics beyond this is INVALID_PARTITIONS. */
#define META_PARTITIONS_MAX 10000

/* Config keys one topic may set. Kafka has a few dozen topic configs; the
 * bound keeps a stream of distinct junk keys from growing a topic without
 * limit. */
#define META_TOPIC_CONFIGS_MAX 1024u

/* Broker config resources with dynamic configs (the cluster-wide
 * default and one per broker id), and keys each may set. */
#define META_BROKER_CONFIG_SETS_MAX 1025u
#define META_BROKER_CONFIGS_MAX 256u

/* Records in one Raft entry (a topic creation writes one per partition). */
#define META_BATCH_RECORDS_MAX (META_PARTITIONS_MAX + 1024)

/* One encoded record or Raft entry, and a whole encoded image. */
#define META_RECORD_BYTES_MAX (64u * 1024)
#define META_BATCH_BYTES_MAX (16u * 1024 * 1024)
#define META_IMAGE_BYTES_MAX (64u * 1024 * 1024)

/* Recently applied records a controller keeps for MetadataFetch; a broker
 * further behind gets the whole image instead. */
#define META_RING_RECORDS_MAX 65536u
#define META_RING_BYTES_MAX (64u * 1024 * 1024)

/* Records in one MetadataFetch answer: a fence of a broker in 100,000
 * ISRs writes as many, and a broker takes them in a few round trips, not
 * dozens (their bytes are bounded by the ring's). */
#define META_FETCH_RECORDS_MAX 16384u

/* Brokers and topics a cluster's image may hold. */
#define META_BROKERS_MAX 1024u
#define META_TOPICS_MAX 100000u

/* Controllers in a quorum (controller.quorum.voters). */
#define CONTROLLER_VOTERS_MAX 9u

/* --- Kafka codec -------------------------------------------------------- */

/* Memory for the arrays of one decoded Kafka request or response (its
 * topics, partitions, ids), from a bounded arena (common/arena.h). Decoded
 * strings and record bytes borrow from the frame and cost nothing here; a
 * partition entry costs a few dozen bytes, so 16 MiB holds hundreds of
 * thousands of them, far beyond any real client. A larger demand is
 * RC_TOO_LARGE, answered with an error or a close, never a bigger malloc. */
#define ARENA_BYTES_MAX (16u * 1024 * 1024)

/* Topics named in one request (Metadata, Produce, Fetch, ListOffsets,
 * CreateTopics, DeleteTopics); more than a cluster can hold is not a real
 * request. */
#define KAFKA_REQUEST_TOPICS_MAX META_TOPICS_MAX

/* Partitions of one topic named in one request (and CreateTopics' manual
 * assignments); a topic never has more. */
#define KAFKA_REQUEST_PARTITIONS_MAX META_PARTITIONS_MAX

/* --- Configuration ------------------------------------------------------ */

/* A properties file larger than this is not a config file. */
#define CONFIG_FILE_BYTES_MAX (1u * 1024 * 1024)

/* One line of a properties file. */
#define CONFIG_LINE_BYTES_MAX (64u * 1024)

/* Distinct keys in one file. */
#define CONFIG_KEYS_MAX 1024u

/* --- Logging ------------------------------------------------------------ */

/* One formatted log line; longer messages are cut, never allocated. */
#define TRACE_LINE_BYTES_MAX 2048u

/* --- RPC ---------------------------------------------------------------- */

/* Bytes after an RPC frame's length field: the 8-byte correlation id and
 * the payload. A whole metadata image (META_IMAGE_BYTES_MAX, 64 MiB) travels
 * in one reply, so the bound is that plus 1 MiB for the message around it.
 * A peer announcing more is disconnected before anything is allocated. */
#define RPC_FRAME_BYTES_MAX (META_IMAGE_BYTES_MAX + 1024u * 1024)

/* Bytes queued for writing on one RPC connection (from uv_write until its
 * callback). A server closes a connection whose replies would exceed it
 * (the peer is not reading); a client refuses the call with RC_FULL. */
#define RPC_CONN_OUTBOX_BYTES_MAX (128u * 1024 * 1024)

/* Calls one RPC client has in flight; beyond, rpc_client_call returns
 * RC_FULL. A broker keeps a handful outstanding, the CLI one. */
#define RPC_INFLIGHT_MAX 1024u

/* Addresses one RPC client knows: a controller quorum, or a CLI's list. */
#define RPC_CLIENT_TARGETS_MAX 64u

/* Connections one RPC server holds at once (every broker, some CLIs).
 * At the bound a new connection closes the one with nothing in flight for
 * the longest, if for RPC_SERVER_EVICT_IDLE_MS (a broker heartbeats far
 * more often), else is closed itself; one with nothing in flight for
 * RPC_SERVER_IDLE_MS is closed (Kafka's connections.max.idle.ms). */
#define RPC_SERVER_CONNS_MAX 1024u
#define RPC_SERVER_EVICT_IDLE_MS 5000u
#define RPC_SERVER_IDLE_MS 600000u

/* Per-connection read buffer. Small frames are parsed in place; a larger
 * frame's body is read straight into its own (validated) allocation. */
#define RPC_READ_BUFFER_BYTES (64u * 1024)

_Static_assert(META_IMAGE_BYTES_MAX + 8u < RPC_FRAME_BYTES_MAX,
               "a metadata image must fit in one RPC frame");
_Static_assert(RPC_FRAME_BYTES_MAX + 4u <= RPC_CONN_OUTBOX_BYTES_MAX,
               "one RPC frame must fit in a connection's outbox");
_Static_assert(RPC_FRAME_BYTES_MAX <= 0x7fffffffu,
               "an RPC frame length fits the 4-byte length field");

/* --- Kafka listener ----------------------------------------------------- */

/* Response bytes queued on one Kafka connection: answers waiting for an
 * earlier one, then bytes not yet handed to the kernel (memory and file
 * spans alike). Above: stop reading; resume below half. Nothing is closed:
 * a slow consumer just stops getting its requests read. */
#define CONN_OUTBOX_BYTES_MAX (80u * 1024 * 1024) /* above: stop reading */

/* Memory that answers waiting to be sent hold on one Kafka connection
 * (each response's buffers and bookkeeping, not the file spans it sends
 * from the page cache). Above: stop reading; resume below half. A client
 * that pipelines small requests and never reads stops here, where
 * CONN_OUTBOX_BYTES_MAX's wire bytes would let tiny answers hold
 * gigabytes. Kafka reads one request per connection at a time. */
#define KAFKA_CONN_OUT_MEMORY_MAX (1024u * 1024)

/* All requests read and answers not yet sent, over every Kafka connection
 * of a broker: the default of queued.max.request.bytes (Kafka's is
 * unbounded, with queued.max.requests = 500). Above it, connections
 * holding KAFKA_CONN_FAIR_SHARE_BYTES or more stop reading until half is
 * freed, so a crowd of clients that never read cannot starve one that
 * does. */
#define KAFKA_QUEUED_MEMORY_MAX (512u * 1024 * 1024)
#define KAFKA_CONN_FAIR_SHARE_BYTES (64u * 1024)

/* Topics one Metadata request may have auto-created (in one call to the
 * controller); the rest answer LEADER_NOT_AVAILABLE and the client's
 * next Metadata creates them. */
#define KAFKA_AUTO_CREATE_PER_REQUEST_MAX 64u

/* At the connection bound, a connection with nothing in flight for this
 * long may be closed to admit a new one (a follower reconnecting to its
 * leader, say), rather than the new one being refused. */
#define KAFKA_CONN_EVICT_IDLE_MS 5000u

/* Kafka connections one broker holds at once (clients, admin tools, other
 * brokers' followers); more are closed as soon as they are accepted. Each
 * costs an fd and a KAFKA_READ_BUFFER_BYTES buffer. */
#define KAFKA_CONNS_MAX 4096u

/* Per-connection read buffer: small frames are copied out of it, a larger
 * frame's rest is read straight into the frame. Most requests are far
 * smaller; 4096 connections cost 64 MiB. */
#define KAFKA_READ_BUFFER_BYTES (16u * 1024)

/* A frame's buffer is allocated up to this size as soon as its length is
 * known (a produce request usually fits, so it is never regrown and
 * copied); beyond it the buffer doubles as bytes arrive, so a peer that
 * announces a huge frame and stalls costs at most this much. */
#define KAFKA_FRAME_PREALLOC_BYTES (1024u * 1024)

/* Bytes read into a frame per read(2) once its length is known. */
#define KAFKA_FRAME_READ_BYTES (256u * 1024)

/* Requests read on one connection and not yet answered and sent on
 * (pipelining: librdkafka allows 1000000 in flight). At the bound: stop
 * reading; resume below half. */
#define KAFKA_CONN_INFLIGHT_MAX 1024u

/* Frame bytes those requests hold (each frame lives until its answer).
 * At the bound: stop reading; resume below half. */
#define KAFKA_CONN_REQUEST_BYTES_MAX REQUEST_BYTES_MAX

/* The in-memory part of one response body (the writer's hard maximum in
 * kafka_response_init()); record bytes travel as file spans outside it. A
 * handler going past it gets RC_TOO_LARGE and answers with an error. */
#define KAFKA_RESPONSE_BODY_BYTES_MAX (64u * 1024 * 1024)

/* File spans spliced into one response: a fetch response has one per
 * partition with data. */
#define KAFKA_RESPONSE_SPLICES_MAX 65536u

/* Span bytes copied per pread()+uv_write() when sendfile(2) cannot go on
 * (socket full, short count, copy-only mode). */
#define KAFKA_COPY_BUFFER_BYTES (256u * 1024)

/* Copy buffers one connection may have in uv_write at once; more wait for
 * a write callback. Bounds a slow reader's copies to 512 KiB. */
#define KAFKA_CONN_COPY_BUFFERS_MAX 2u

/* Bytes of a fetched span read back per pread(2) to check its batches'
 * CRCs before they are sent (broker/log/log_verify.h); a larger batch is
 * checked piecewise. One buffer per broker, reused by every fetch. */
#define FETCH_VERIFY_BUFFER_BYTES (1024u * 1024)

/* The scrub's read buffer (broker/replication/repair.h). */
#define REPLICA_SCRUB_BUFFER_BYTES (256u * 1024)

/* Idle copy buffers the listener keeps for reuse (4 MiB); others are
 * freed when their write completes. */
#define KAFKA_COPY_POOL_BUFFERS_MAX 16u

_Static_assert(REQUEST_BYTES_MAX <= 0x7fffffffu,
               "a request length fits the 4-byte size field");
_Static_assert(REQUEST_BYTES_MAX <= KAFKA_CONN_REQUEST_BYTES_MAX,
               "one request of the largest size must be readable");
_Static_assert(KAFKA_RESPONSE_BODY_BYTES_MAX <= CONN_OUTBOX_BYTES_MAX,
               "one response body must fit in a connection's outbox");
_Static_assert(KAFKA_CONN_INFLIGHT_MAX >= 2u,
               "resuming below half needs room for one request");

/* --- Relations ---------------------------------------------------------- */

_Static_assert(BATCH_BYTES_MAX <= REQUEST_BYTES_MAX,
               "a batch must fit in one request");
_Static_assert(BATCH_HEADER_BYTES < LOG_SCAN_FIRST_READ_BYTES,
               "a scan's first read must hold at least one batch header");
_Static_assert(LOG_SCAN_FIRST_READ_BYTES <= LOG_SCAN_BUFFER_BYTES,
               "the first read fits the scan buffer");
_Static_assert(BATCH_HEADER_BYTES <= LOG_STARTUP_BUFFER_BYTES,
               "the start-up check's buffer holds a batch header");
_Static_assert(LOG_STARTUP_BUFFER_BYTES <= LOG_STARTUP_CHUNK_BYTES,
               "a start-up check job reads at least one buffer");
_Static_assert(BATCH_BYTES_MAX <= LOG_SEGMENT_BYTES_MAX,
               "a batch must fit in one segment");
_Static_assert(KAFKA_REQUEST_TOPICS_MAX <= KAFKA_ARRAY_COUNT_MAX,
               "a request's topic cap is within the reader's array bound");
_Static_assert(KAFKA_REQUEST_PARTITIONS_MAX <= KAFKA_ARRAY_COUNT_MAX,
               "a request's partition cap is within the reader's bound");
_Static_assert(ARENA_BYTES_MAX <= REQUEST_BYTES_MAX,
               "decoded arrays never need more memory than a frame");

#endif
