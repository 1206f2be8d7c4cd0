// A kafkajs 2.2.4 consumer group against a Cairn cluster, for
// tests/integration/test_groups.c (groups/kafkajs_*): a consumer with
// groupId subscribes fromBeginning, reads every record of TOPIC and
// commits (kafkajs autoCommit, at the end of each batch); afterwards the
// group's committed offsets (admin fetchOffsets, OffsetFetch) equal the
// high watermarks (admin fetchTopicOffsets, ListOffsets). A second
// consumer of the same group then reads only what was produced after.
// The test creates TOPIC (PARTITIONS partitions, replication factor 3).
// Prints "[PASS] what" / "[FAIL] what: why" lines; exits 0 only if
// nothing failed.
//     BOOTSTRAP=host:port,... TOPIC=t GROUP=g PARTITIONS=3 node kafkajs_group.js
'use strict'

const { Kafka, Partitioners, logLevel } = require('kafkajs')

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
const TOPIC = process.env.TOPIC
const GROUP = process.env.GROUP
const PARTITIONS = Number(process.env.PARTITIONS || 3)
if (brokers.length === 0 || !TOPIC || !GROUP) {
  console.error('usage: BOOTSTRAP=host:port,... TOPIC=t GROUP=g node kafkajs_group.js')
  process.exit(2)
}

const WATCHDOG_MS = 100000
const FIRST = 40  // records per partition before the first consumer
const MORE = 10   // and after it left

// kafkajs logs through the logCreator; keep stdout for results.
const logCreator = () => ({ namespace, level, log }) => {
  console.error(`kafkajs ${level} ${namespace} ${log.message}` +
    (log.error ? ` (${log.error})` : ''))
}
const kafka = new Kafka({
  clientId: 'cairn-kafkajs-group',
  brokers,
  logLevel: logLevel.WARN,
  logCreator,
  retry: { retries: 8 },
})

let passed = 0
let failed = 0
const pass = name => { passed++; console.log(`[PASS] ${name}`) }
const fail = (name, why) => { failed++; console.log(`[FAIL] ${name}: ${why}`) }

// Runs one check: f() returns nothing on success, throws or returns a
// string saying what is wrong otherwise. Returns true if it passed.
async function check(name, f) {
  try {
    const why = await f()
    if (why) {
      fail(name, why)
      return false
    }
    pass(name)
    return true
  } catch (e) {
    fail(name, `${e.name}: ${e.message}`)
    return false
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const show = v => JSON.stringify(v)
const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i)

// Polls f() until it returns true, at most budgetMs.
async function until(f, budgetMs) {
  const deadline = Date.now() + budgetMs
  for (;;) {
    if (await f()) return true
    if (Date.now() > deadline) return false
    await sleep(100)
  }
}

// Sends `count` records to every partition, values "p-i" from `from` on.
async function produce(producer, from, count) {
  const messages = []
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = from; i < from + count; i++) {
      messages.push({ partition: p, key: `k${i}`, value: `${p}-${i}` })
    }
  }
  const r = await producer.send({ topic: TOPIC, acks: -1, messages })
  const got = r.map(x => [x.partition, x.errorCode, x.baseOffset]).sort()
  const want = range(0, PARTITIONS).map(p => [p, 0, `${from}`])
  if (show(got) !== show(want)) return `answered ${show(r)}`
}

// One consumer of GROUP from its start until `want` records were read or
// the budget ran out; returns partition -> offsets read, in order, and
// the group as described while it ran.
async function consume(name, want, budgetMs) {
  const consumer = kafka.consumer({
    groupId: GROUP,
    sessionTimeout: 10000,
    heartbeatInterval: 500,
    rebalanceTimeout: 10000,
    maxWaitTimeInMs: 500,
  })
  const reads = {}
  let n = 0
  let described = null
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [TOPIC], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const off = Number(message.offset)
        const [vp, vi] = message.value.toString().split('-').map(Number)
        if (vp !== partition || vi !== off) {
          throw new Error(`record ${message.value} at ${partition}/${off}`)
        }
        ;(reads[partition] = reads[partition] || []).push(off)
        n++
      },
    })
    const done = await until(() => n >= want, budgetMs)
    if (!done) throw new Error(`${name}: ${n} of ${want} records in ${budgetMs} ms`)
    const admin = kafka.admin()
    await admin.connect()
    try {
      await until(async () => {
        described = (await admin.describeGroups([GROUP])).groups[0]
        return described.state === 'Stable'
      }, 10000)
    } finally {
      await admin.disconnect()
    }
  } finally {
    await consumer.disconnect() // commits what was read and leaves
  }
  // Anything more that arrived before the disconnect counts too.
  return { reads, described }
}

function readsExactly(reads, from, to) {
  for (let p = 0; p < PARTITIONS; p++) {
    const got = reads[p] || []
    if (show(got) !== show(range(from, to))) {
      return `partition ${p}: read ${got.length} records` +
        ` ${got.slice(0, 5)}...${got.slice(-3)}, want ${from}..${to - 1}`
    }
  }
}

async function committedEqualsHigh(admin, want) {
  const offsets = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
  const committed = offsets[0].partitions
    .map(x => [x.partition, Number(x.offset)]).sort((a, b) => a[0] - b[0])
  const highs = (await admin.fetchTopicOffsets(TOPIC))
    .map(x => [x.partition, Number(x.high)]).sort((a, b) => a[0] - b[0])
  const wanted = range(0, PARTITIONS).map(p => [p, want])
  if (show(committed) !== show(highs) || show(highs) !== show(wanted)) {
    return `committed ${show(committed)}, high watermarks ${show(highs)},` +
      ` want ${want} everywhere`
  }
}

async function main() {
  const admin = kafka.admin()
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  })
  await admin.connect()
  await producer.connect()
  await check(`producer sends ${FIRST} records to each partition`,
    () => produce(producer, 0, FIRST))

  let first = null
  await check('a consumer group reads every record once, in order', async () => {
    first = await consume('first consumer', FIRST * PARTITIONS, 45000)
    return readsExactly(first.reads, 0, FIRST)
  })
  await check('describeGroups while it ran: Stable, one kafkajs member', () => {
    const g = first && first.described
    if (!g) return 'not described'
    if (g.state !== 'Stable' || g.protocolType !== 'consumer' ||
        g.protocol !== 'RoundRobinAssigner' || g.members.length !== 1 ||
        g.members[0].clientId !== 'cairn-kafkajs-group' ||
        !g.members[0].memberId.startsWith('cairn-kafkajs-group-')) {
      return show({ ...g, members: g.members.map(m => [m.memberId, m.clientId]) })
    }
  })
  await check('committed offsets (fetchOffsets) equal the high watermarks',
    () => committedEqualsHigh(admin, FIRST))
  await check('describeGroups after the consumer left: Empty', async () => {
    const g = (await admin.describeGroups([GROUP])).groups[0]
    if (g.state !== 'Empty' || g.members.length !== 0) {
      return `state ${g.state}, ${g.members.length} members`
    }
  })

  await check(`producer sends ${MORE} more records to each partition`,
    () => produce(producer, FIRST, MORE))
  await check('a new consumer of the group reads only the new records', async () => {
    const second = await consume('second consumer', MORE * PARTITIONS, 45000)
    return readsExactly(second.reads, FIRST, FIRST + MORE)
  })
  await check('committed offsets equal the new high watermarks',
    () => committedEqualsHigh(admin, FIRST + MORE))
  await producer.disconnect()
  await admin.disconnect()
}

setTimeout(() => {
  fail('watchdog', `still running after ${WATCHDOG_MS} ms`)
  process.exit(1)
}, WATCHDOG_MS).unref()

main().then(
  () => {
    console.log(`kafkajs_group: ${passed} passed, ${failed} failed`)
    process.exit(failed === 0 && passed > 0 ? 0 : 1)
  },
  e => { fail('flow', e.stack); process.exit(1) })
