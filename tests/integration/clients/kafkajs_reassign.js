// kafkajs 2.2.4 (npm) admin.alterPartitionReassignments and
// admin.listPartitionReassignments against a Cairn cluster whose new
// broker may not fetch (the calling script sets its
// follower.replication.throttled.rate to 0), so a move stays in progress:
//   - partition PART of TOPIC moves to [NEW, its replicas but the first];
//   - listPartitionReassignments (all, then the topic's partition) shows
//     it with NEW adding and the old first replica removing;
//   - an empty replica list is refused with INVALID_REPLICA_ASSIGNMENT
//     (kafkajs cannot send a cancel: it wants an array).
// Prints "[PASS] name" / "[FAIL] name: why" lines; exits non-zero if any
// check failed.
//
//   BOOTSTRAP=host:port,... TOPIC=t PART=1 NEW=4 node kafkajs_reassign.js
'use strict'

const { Kafka, logLevel } = require('kafkajs')
const { check, show, exitCode } = require('./checks.js')

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
const TOPIC = process.env.TOPIC
const PART = Number(process.env.PART || 1)
const NEW = Number(process.env.NEW || 4)
if (brokers.length === 0 || !TOPIC) {
  console.error('usage: BOOTSTRAP=host:port,... TOPIC=t [PART=1] [NEW=4] node kafkajs_reassign.js')
  process.exit(2)
}


async function main () {
  const kafka = new Kafka({
    clientId: 'cairn-kafkajs-reassign',
    brokers,
    logLevel: logLevel.ERROR,
    retry: { retries: 3 }
  })
  const admin = kafka.admin()
  await admin.connect()
  const md = await admin.fetchTopicMetadata({ topics: [TOPIC] })
  const replicas = md.topics[0].partitions.find(p => p.partitionId === PART).replicas
  const target = [NEW, ...replicas.slice(1)]
  await admin.alterPartitionReassignments({
    topics: [{ topic: TOPIC, partitionAssignment: [{ partition: PART, replicas: target }] }]
  })
  check(`alterPartitionReassignments ${TOPIC}-${PART} ${show(replicas)} -> ${show(target)}`, true)

  let l = await admin.listPartitionReassignments({})
  let mine = (l.topics.find(t => t.name === TOPIC) || { partitions: [] })
    .partitions.filter(p => p.partition === PART)
  check('listPartitionReassignments (all) shows the move',
    mine.length === 1 && show(mine[0].addingReplicas) === show([NEW]) &&
      show(mine[0].removingReplicas) === show([replicas[0]]), show(l))
  l = await admin.listPartitionReassignments({ topics: [{ topic: TOPIC, partitions: [PART] }] })
  mine = (l.topics.find(t => t.name === TOPIC) || { partitions: [] }).partitions
  check('listPartitionReassignments (this partition) shows it', mine.length === 1 &&
    mine[0].partition === PART, show(l))

  let err = null
  try {
    await admin.alterPartitionReassignments({
      topics: [{ topic: TOPIC, partitionAssignment: [{ partition: PART, replicas: [] }] }]
    })
  } catch (e) {
    err = e
  }
  // kafkajs reports the partition's error as its KafkaJSAggregateError.
  check('an empty replica list is refused: INVALID_REPLICA_ASSIGNMENT',
    err !== null && show(err).includes('INVALID_REPLICA_ASSIGNMENT') ||
      (err && String(err.type || err.message).includes('INVALID_REPLICA_ASSIGNMENT')),
    err ? `${err.name} ${err.type} ${err.message}` : 'no error')
  await admin.disconnect()
}

main().catch(e => check('flow', false, e.stack || e))
  .finally(() => process.exit(exitCode()))
