// @platformatic/kafka 1.35.0 (npm, pinned in package.json) against a
// running Cairn cluster, through its public API only. The client speaks
// Kafka 3.5+ (ApiVersions v3, then the flexible versions of every API):
//   - Admin: createTopics, listTopics, metadata, deleteTopics;
//   - an idempotent Producer (acks all) of keyed records with headers, two
//     sends, the base offsets each returns;
//   - Consumer.listOffsets earliest and latest;
//   - a Consumer in a group reading both partitions from the earliest
//     offset (keys, values, headers, offsets) and committing offset 3 of
//     each (Message.commit), the committed offsets read back
//     (listCommittedOffsets), and a new consumer of the group resuming
//     exactly there.
// Prints one "[PASS] name" or "[FAIL] name: why" line per check (the
// client's errors go to stderr) and exits non-zero if any check failed.
//
//   BOOTSTRAP=host:port,... node platformatic_flow.mjs
import {
  Admin,
  Consumer,
  ListOffsetTimestamps,
  ProduceAcks,
  Producer,
  stringDeserializers,
  stringSerializers
} from '@platformatic/kafka'
import { check, show, exitCode } from './checks.js'

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
if (brokers.length === 0) {
  console.error('usage: BOOTSTRAP=host:port,... node platformatic_flow.mjs')
  process.exit(2)
}

const WATCHDOG_MS = 150000
const TOPIC = 'pk-orders'
const SCRATCH = 'pk-scratch' // created, then deleted
const GROUP = 'pk-group'
const PARTITIONS = 2
const PER_PART = 5 // records per partition: 3 in a first send, 2 in a second
const FIRST_SEND = 3
const COMMITTED = 3 // the first consumer commits offset 3 of each partition

const pass = name => check(name, true)
const fail = (name, why) => check(name, false, why)

// Every step has a deadline: a client stuck on a refused version must not
// hang the test.
const within = (ms, what, promise) => Promise.race([
  promise,
  new Promise((resolve, reject) =>
    setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref())
])
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

const base = { bootstrapBrokers: brokers, retries: 5, retryDelay: 200, timeout: 10000 }

// Record i of partition p, as produced and as expected back.
const key = (p, i) => `key-${p}-${i}`
const value = (p, i) => `value ${p}/${i}: platformatic`
const headers = (p, i) => ({ trace: `t-${p}-${i}`, client: 'platformatic-1.35.0' })

function mismatch (m, p, i) {
  if (m.topic !== TOPIC || m.partition !== p || m.offset !== BigInt(i)) {
    return `got ${m.topic}/${m.partition}@${m.offset}, want ${TOPIC}/${p}@${i}`
  }
  if (m.key !== key(p, i) || m.value !== value(p, i)) {
    return `offset ${i}: key ${show(m.key)} value ${show(m.value)}`
  }
  const want = Object.entries(headers(p, i))
  const got = [...m.headers]
  if (show(got) !== show(want)) return `offset ${i}: headers ${show(got)}`
  return ''
}

async function admin () {
  const a = new Admin({ ...base, clientId: 'cairn-pk-admin' })
  try {
    const created = await within(20000, 'createTopics', a.createTopics({
      topics: [TOPIC, SCRATCH], partitions: PARTITIONS, replicas: 3
    }))
    const mine = created.find(t => t.name === TOPIC)
    check('Admin.createTopics: two topics, 2 partitions, 3 replicas',
      created.length === 2 && mine && mine.partitions === PARTITIONS &&
        mine.replicas === 3, show(created))

    // A broker's metadata follows the controller's: the new topics show
    // in listTopics (Metadata for all topics) within a moment, as in Kafka.
    let topics
    const listed = Date.now() + 15000
    do {
      topics = await within(10000, 'listTopics', a.listTopics())
      if (topics.includes(TOPIC) && topics.includes(SCRATCH)) break
      await sleep(200)
    } while (Date.now() < listed)
    check('Admin.listTopics lists both',
      topics.includes(TOPIC) && topics.includes(SCRATCH), show(topics))

    // Leaders appear once the partitions' replicas have started.
    let md
    let why = ''
    const deadline = Date.now() + 20000
    for (;;) {
      md = await within(10000, 'metadata',
        a.metadata({ topics: [TOPIC], forceUpdate: true }))
      const t = md.topics.get(TOPIC)
      why = !t ? 'topic missing'
        : t.partitionsCount !== PARTITIONS ? `${t.partitionsCount} partitions`
          : t.partitions.some(x => !md.brokers.has(x.leader)) ? 'no leader yet'
            : t.partitions.some(x => x.replicas.length !== 3 || x.isr.length !== 3)
              ? `replicas ${show(t.partitions)}` : ''
      if (why === '' || Date.now() > deadline) break
      await sleep(200)
    }
    check('Admin.metadata: 3 brokers, a controller, both partitions led with 3 replicas in sync',
      why === '' && md.brokers.size === 3 && md.brokers.has(md.controllerId),
      `${why} ${show(md)}`)

    await within(20000, 'deleteTopics', a.deleteTopics({ topics: [SCRATCH] }))
    let left
    const gone = Date.now() + 15000
    do {
      left = await within(10000, 'listTopics', a.listTopics())
      if (!left.includes(SCRATCH)) break
      await sleep(200)
    } while (Date.now() < gone)
    check('Admin.deleteTopics: the scratch topic is gone from listTopics',
      !left.includes(SCRATCH) && left.includes(TOPIC), show(left))
  } finally {
    await a.close()
  }
}

async function produce () {
  const p = new Producer({
    ...base,
    clientId: 'cairn-pk-producer',
    serializers: stringSerializers,
    idempotent: true,
    acks: ProduceAcks.ALL
  })
  try {
    const sends = [[0, FIRST_SEND], [FIRST_SEND, PER_PART]]
    for (const [from, to] of sends) {
      const messages = []
      for (let i = from; i < to; i++) {
        for (let part = 0; part < PARTITIONS; part++) {
          messages.push({
            topic: TOPIC, partition: part, key: key(part, i),
            value: value(part, i), headers: headers(part, i)
          })
        }
      }
      const result = await within(20000, 'send', p.send({ messages }))
      const offs = (result.offsets || [])
        .filter(o => o.topic === TOPIC)
        .sort((x, y) => x.partition - y.partition)
        .map(o => `${o.partition}@${o.offset}`)
      const want = [...Array(PARTITIONS).keys()].map(x => `${x}@${from}`)
      check(`idempotent Producer (acks all) sent records ${from}..${to - 1} of each partition at base offset ${from}`,
        show(offs) === show(want), show(result))
    }
    check('the idempotent producer holds a producer id',
      typeof p.producerId === 'bigint' && p.producerId >= 0n &&
        p.producerEpoch >= 0, `${p.producerId} ${p.producerEpoch}`)
  } finally {
    await p.close()
  }
}

async function listOffsets () {
  const c = new Consumer({ ...base, clientId: 'cairn-pk-offsets', groupId: 'pk-offsets' })
  try {
    for (const [name, ts, want] of [['earliest', ListOffsetTimestamps.EARLIEST, 0n],
      ['latest', ListOffsetTimestamps.LATEST, BigInt(PER_PART)]]) {
      const offs = await within(15000, 'listOffsets',
        c.listOffsets({ topics: [TOPIC], timestamp: ts }))
      const got = offs.get(TOPIC)
      check(`Consumer.listOffsets ${name}: ${want} on both partitions`,
        got && got.length === PARTITIONS && got.every(o => o === want), show(offs))
    }
  } finally {
    await c.close()
  }
}

// A consumer of GROUP reads until it has `count` messages; commit(m)
// says which to commit. Returns the messages per partition.
async function groupRead (name, count, commit) {
  const c = new Consumer({
    ...base,
    clientId: `cairn-pk-${name}`,
    groupId: GROUP,
    deserializers: stringDeserializers,
    sessionTimeout: 10000,
    heartbeatInterval: 500,
    maxWaitTime: 500
  })
  const got = [...Array(PARTITIONS)].map(() => [])
  try {
    const stream = await within(30000, `${name}: consume`, c.consume({
      topics: [TOPIC], mode: 'committed', fallbackMode: 'earliest', autocommit: false
    }))
    let n = 0
    await within(30000, `${name}: ${count} messages`, (async () => {
      for await (const m of stream) {
        got[m.partition].push(m)
        if (commit(m)) await m.commit()
        if (++n === count) break
      }
    })())
    await stream.close()
  } finally {
    await c.close()
  }
  return got
}

async function group () {
  const first = await groupRead('first', PARTITIONS * PER_PART,
    m => m.offset === BigInt(COMMITTED - 1))
  let why = ''
  for (let p = 0; p < PARTITIONS && why === ''; p++) {
    if (first[p].length !== PER_PART) why = `partition ${p}: ${first[p].length} messages`
    first[p].forEach((m, i) => { why = why || mismatch(m, p, i) })
  }
  check('a group consumer without committed offsets reads both partitions from the earliest (keys, values, headers, offsets)',
    why === '', why)

  const c = new Consumer({ ...base, clientId: 'cairn-pk-commits', groupId: GROUP })
  try {
    const committed = await within(15000, 'listCommittedOffsets', c.listCommittedOffsets({
      topics: [{ topic: TOPIC, partitions: [...Array(PARTITIONS).keys()] }]
    }))
    const offs = committed.get(TOPIC)
    check(`listCommittedOffsets: ${COMMITTED} on both partitions after Message.commit`,
      offs && offs.length === PARTITIONS && offs.every(o => o === BigInt(COMMITTED)),
      show(committed))
  } finally {
    await c.close()
  }

  const second = await groupRead('second', PARTITIONS * (PER_PART - COMMITTED), () => false)
  why = ''
  for (let p = 0; p < PARTITIONS && why === ''; p++) {
    if (second[p].length !== PER_PART - COMMITTED) why = `partition ${p}: ${second[p].length} messages`
    second[p].forEach((m, i) => { why = why || mismatch(m, p, COMMITTED + i) })
  }
  check(`a new group consumer resumes at offset ${COMMITTED}: exactly records ${COMMITTED}..${PER_PART - 1} of each partition`,
    why === '', why)
}

const watchdog = setTimeout(() => {
  fail('flow', `still running after ${WATCHDOG_MS} ms`)
  process.exit(1)
}, WATCHDOG_MS)
watchdog.unref()

for (const [name, step] of [['admin', admin], ['produce', produce],
  ['listOffsets', listOffsets], ['group', group]]) {
  try {
    await step()
  } catch (e) {
    fail(name, `${e.message}${e.errors ? ' ' + e.errors.map(x => x.message).join('; ') : ''}`)
    console.error(e)
    break
  }
}
process.exit(exitCode())
