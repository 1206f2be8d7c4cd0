// kafkajs 2.2.4's admin.createPartitions (CreatePartitions v1) against a
// running Cairn cluster: a topic grown from 2 to 4 partitions, keyed
// records from kafkajs's default partitioner landing on the new
// partitions, their high watermarks, and Kafka's errors as kafkajs
// reports them; also admin.describeCluster (which kafkajs answers from
// Metadata).
//
// Prints one "[PASS] name" or "[FAIL] name: why" line per check and exits
// non-zero if any check failed.
//
//   BOOTSTRAP=host:port,... node partitions_kafkajs.js
'use strict'

const { Kafka, Partitioners, logLevel } = require('kafkajs')
const { check, exitCode } = require('./checks.js')

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
const TOPIC = 'js-grow'

async function partitionCount (admin) {
  const md = await admin.fetchTopicMetadata({ topics: [TOPIC] })
  return md.topics[0].partitions.filter(p => p.leader >= 0).length
}

async function waitCount (admin, n) {
  const deadline = Date.now() + 30000
  let have = -1
  while (Date.now() < deadline) {
    have = await partitionCount(admin)
    if (have === n) return have
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return have
}

// Each broker's own view (an admin seeded with it alone): kafkajs asks
// any broker it is connected to for metadata, and a producer answered by
// one that has not applied the growth yet maps keys over 2 partitions;
// its retry of a request that failed on a new partition then puts them
// elsewhere, twice.
async function waitEveryBroker (n) {
  let least = n
  for (const b of brokers) {
    const admin = new Kafka({ clientId: 'partitions-kafkajs-view', brokers: [b], logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    least = Math.min(least, await waitCount(admin, n))
    await admin.disconnect()
  }
  return least
}

async function errorOf (admin, topicPartitions) {
  try {
    await admin.createPartitions({ topicPartitions })
    return 'none'
  } catch (e) {
    return e.type || e.message
  }
}

async function main () {
  const kafka = new Kafka({ clientId: 'partitions-kafkajs', brokers, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2, replicationFactor: 3 }], waitForLeaders: true })
  check('the topic starts with 2 partitions', await waitCount(admin, 2) === 2)

  await admin.createPartitions({ topicPartitions: [{ topic: TOPIC, count: 4 }] })
  const n = await waitEveryBroker(4)
  check('admin.createPartitions grows it to 4 on every broker', n === 4, n)

  // Idempotent: kafkajs retries a whole request when one of its partitions
  // fails (a new partition's leader not serving yet), and without
  // idempotence the partitions already written would be written twice.
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1
  })
  await producer.connect()
  const messages = []
  for (let i = 0; i < 100; i++) messages.push({ key: `key-${i}`, value: `value-${i}` })
  const res = await producer.send({ topic: TOPIC, acks: -1, messages })
  await producer.disconnect()
  const used = new Set(res.map(r => r.partition))
  check('keyed records land on the new partitions too', used.has(2) && used.has(3), [...used])
  const offsets = await admin.fetchTopicOffsets(TOPIC)
  const total = offsets.reduce((s, o) => s + Number(o.high), 0)
  check('the four high watermarks add up to the 100 records', total === 100, offsets)

  const cases = [
    ['same count: INVALID_PARTITIONS', [{ topic: TOPIC, count: 4 }], 'INVALID_PARTITIONS'],
    ['fewer: INVALID_PARTITIONS', [{ topic: TOPIC, count: 1 }], 'INVALID_PARTITIONS'],
    ['unknown topic: UNKNOWN_TOPIC_OR_PARTITION', [{ topic: 'js-nope', count: 3 }], 'UNKNOWN_TOPIC_OR_PARTITION'],
    ['assignments short: INVALID_REPLICA_ASSIGNMENT', [{ topic: TOPIC, count: 6, assignments: [[1, 2, 3]] }], 'INVALID_REPLICA_ASSIGNMENT']
  ]
  for (const [name, tps, want] of cases) {
    const got = await errorOf(admin, tps)
    check(name, got === want, got)
  }
  await admin.createPartitions({ topicPartitions: [{ topic: TOPIC, count: 5, assignments: [[2, 3, 1]] }] })
  // A broker may list the new partition a moment before it has a leader.
  const honoured = p => p !== undefined && JSON.stringify(p.replicas) === '[2,3,1]' && p.leader === 2
  const deadline = Date.now() + 30000
  let p4
  do {
    const md = await admin.fetchTopicMetadata({ topics: [TOPIC] })
    p4 = md.topics[0].partitions.find(p => p.partitionId === 4)
    if (!honoured(p4)) await new Promise(resolve => setTimeout(resolve, 100))
  } while (!honoured(p4) && Date.now() < deadline)
  check('an assignment is honoured (partition 4 on 2,3,1, led by 2)', honoured(p4),
    p4 === undefined ? 'partition 4 not listed' : p4)
  // kafkajs's describeCluster reads Metadata (not DescribeCluster).
  const cluster = await admin.describeCluster()
  const ids = cluster.brokers.map(b => b.nodeId).sort()
  check('admin.describeCluster: three brokers, a live one as controller',
    ids.join() === '1,2,3' && ids.includes(cluster.controller) && cluster.clusterId === 'cairn', cluster)
  await admin.disconnect()
}

const watchdog = setTimeout(() => { console.log('[FAIL] watchdog'); process.exit(1) }, 120000)
main().then(() => {
  clearTimeout(watchdog)
  process.exit(exitCode())
}, e => {
  console.log(`[FAIL] ${e.stack}`)
  process.exit(1)
})
