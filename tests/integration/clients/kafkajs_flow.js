// kafkajs 2.2.4 (npm, pinned in package.json) against a running Cairn
// cluster: admin calls, gzip producers (acks -1, 1, 0 and idempotent), the
// offsets kafkajs reads with ListOffsets, and the records read back with
// kafkajs's own Fetch v11.
//
// Consumer groups are not implemented in Cairn yet (FindCoordinator,
// JoinGroup, ...), and kafkajs's public consumer needs one, so the reading
// side uses kafkajs's Cluster/Broker classes (require('kafkajs/src/...'),
// not its public API): the same Fetch v11 encoder and record batch decoder
// (gzip included) the consumer uses, without a group.
//
// Prints one "[PASS] name" or "[FAIL] name: why" line per check (kafkajs's
// own log lines go to stderr) and exits non-zero if any check failed.
// Writes the records produced to the main topic as kcat would print them
// with -f '%p %o %k %s %h\n', one per line, partition then offset order,
// to $EXPECT (if set), so tests/integration/kafkajs.sh can read them back
// with kcat too.
//
//   BOOTSTRAP=host:port,... [EXPECT=file] node kafkajs_flow.js
'use strict'

const fs = require('fs')
const { Kafka, CompressionTypes, Partitioners, logLevel } = require('kafkajs')
const Cluster = require('kafkajs/src/cluster')
const { createLogger, LEVELS } = require('kafkajs/src/loggers')
const socketFactory = require('kafkajs/src/network/socketFactory')

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
if (brokers.length === 0) {
  console.error('usage: BOOTSTRAP=host:port,... node kafkajs_flow.js')
  process.exit(2)
}

const WATCHDOG_MS = 150000
const PARTITIONS = 3
const ORDERS = 'js-orders'   // main topic: three gzip sends, read back
const KEYED = 'js-keyed'     // default partitioner by key
const IDEM = 'js-idem'       // idempotent producer
const SCRATCH = 'js-scratch' // created, then deleted

// kafkajs logs through console.info/warn/error; keep stdout for results.
// A response to an acks=0 Produce shows up as "Response without match"
// (kafka-protocol.md section 7, pitfall 2), counted here.
let unmatchedResponses = 0
const logCreator = () => ({ namespace, log }) => {
  if (log.message.includes('Response without match')) unmatchedResponses++
  console.error(`kafkajs ${namespace} ${log.message}`)
}
const kafka = new Kafka({
  clientId: 'cairn-kafkajs-flow',
  brokers,
  logLevel: logLevel.WARN,
  logCreator,
  retry: { retries: 5 },
})

let passed = 0
let failed = 0
const pass = name => { passed++; console.log(`[PASS] ${name}`) }
const fail = (name, why) => { failed++; console.log(`[FAIL] ${name}: ${why}`) }

// Runs one check: f() returns nothing on success, throws or returns a
// string saying what is wrong otherwise.
async function check(name, f) {
  try {
    const why = await f()
    if (why) fail(name, why)
    else pass(name)
  } catch (e) {
    fail(name, `${e.name}: ${e.message}`)
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
const show = v => JSON.stringify(v)

// Polls f() until it returns true, at most budget_ms.
async function until(f, budgetMs) {
  const deadline = Date.now() + budgetMs
  for (;;) {
    if (await f()) return true
    if (Date.now() > deadline) return false
    await sleep(100)
  }
}

// --- Records for the main topic -----------------------------------------

// Send s (0, 1, 2) puts `count` records on every partition; each record's
// fields say where it belongs, so the reader can check them one by one.
function ordersSend(s, count) {
  const messages = []
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = 0; i < count; i++) {
      const m = { partition: p, key: `k-${s}-${p}-${i}`, value: `order-${s}-${p}-${i}` }
      if (i === 0) m.headers = { source: 'kafkajs', send: `${s}` }
      if (i === 1) m.headers = { trace: `t${p}${i}` }
      if (s === 1 && p === 2 && i === 2) m.key = null // a null key
      messages.push(m)
    }
  }
  return messages
}

// acks=0 goes first: the sends after it use the same connections, so a
// stray answer to it would arrive before theirs.
const SENDS = [
  { acks: 0, count: 1 },
  { acks: -1, count: 4 },
  { acks: 1, count: 2 },
].map((s, i) => ({ ...s, messages: ordersSend(i, s.count) }))
const PER_PARTITION = SENDS.reduce((n, s) => n + s.count, 0)

// What every partition must hold, in offset order.
function expectedOrders() {
  const byPartition = Array.from({ length: PARTITIONS }, () => [])
  for (const s of SENDS) {
    for (const m of s.messages) byPartition[m.partition].push(m)
  }
  return byPartition.map((ms, p) => ms.map((m, o) => ({
    partition: p,
    offset: `${o}`,
    key: m.key,
    value: m.value,
    headers: m.headers || {},
  })))
}

// kcat -f '%p %o %k %s %h': a null key prints as nothing, headers as
// name=value joined by commas.
function kcatLine(r) {
  const h = Object.entries(r.headers).map(([k, v]) => `${k}=${v}`).join(',')
  return `${r.partition} ${r.offset} ${r.key === null ? '' : r.key} ${r.value} ${h}`
}

// --- Group-less Fetch through kafkajs's internal Cluster ----------------

let fetchCluster = null

async function fetchConnect() {
  fetchCluster = new Cluster({
    logger: createLogger({ level: LEVELS.WARN, logCreator }),
    socketFactory: socketFactory(),
    brokers,
    clientId: 'cairn-kafkajs-fetch',
    connectionTimeout: 1000,
    enforceRequestTimeout: true,
    retry: { retries: 5 },
  })
  await fetchCluster.connect()
}

// One Fetch v11 (read_committed, like kafkajs's consumer) per leader for
// the given partitions from fetchOffset; returns partition -> {hwm,
// records}, records decoded by kafkajs (batches decompressed), keys,
// values and header values as strings.
async function fetchRecords(topic, partitions, fetchOffset, maxWaitTime) {
  await fetchCluster.addTargetTopic(topic)
  await fetchCluster.refreshMetadata()
  const byLeader = fetchCluster.findLeaderForPartitions(topic, partitions)
  const out = {}
  for (const [nodeId, ps] of Object.entries(byLeader)) {
    const broker = await fetchCluster.findBroker({ nodeId })
    const rsp = await broker.fetch({
      replicaId: -1,
      isolationLevel: 1,
      maxWaitTime,
      minBytes: 1,
      maxBytes: 10485760,
      topics: [{
        topic,
        partitions: ps.map(p => ({
          partition: p, fetchOffset: `${fetchOffset}`, maxBytes: 1048576,
        })),
      }],
    })
    for (const t of rsp.responses) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0) throw new Error(`partition ${p.partition} error ${p.errorCode}`)
        out[p.partition] = {
          hwm: p.highWatermark,
          records: p.messages.map(m => ({
            partition: p.partition,
            offset: m.offset,
            key: m.key === null ? null : m.key.toString(),
            value: m.value === null ? null : m.value.toString(),
            headers: Object.fromEntries(
              Object.entries(m.headers).map(([k, v]) => [k, v.toString()])),
            producerId: m.batchContext.producerId,
            firstSequence: m.batchContext.firstSequence,
          })),
        }
      }
    }
  }
  return out
}

// --- The flow -----------------------------------------------------------

async function adminChecks(admin) {
  await check('admin createTopics with waitForLeaders', async () => {
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [ORDERS, KEYED, IDEM, SCRATCH].map(topic => ({
        topic,
        numPartitions: topic === IDEM || topic === SCRATCH ? 1 : PARTITIONS,
        replicationFactor: 1,
        // acks=all on one replica: the minimum must be 1, as in Kafka
        configEntries: [{ name: 'min.insync.replicas', value: '1' }],
      })),
    })
    if (created !== true) return `createTopics answered ${created}`
  })
  await check('admin createTopics of an existing topic answers false', async () => {
    const created = await admin.createTopics({ topics: [{ topic: ORDERS, numPartitions: 1 }] })
    if (created !== false) return `createTopics answered ${created}`
  })
  await check('admin listTopics lists the new topics', async () => {
    const topics = await admin.listTopics()
    const missing = [ORDERS, KEYED, IDEM, SCRATCH].filter(t => !topics.includes(t))
    if (missing.length > 0) return `missing ${missing} in ${show(topics)}`
  })
  await check('admin fetchTopicMetadata: every partition has a leader', async () => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [ORDERS] })
    const ps = topics[0].partitions
    if (ps.length !== PARTITIONS) return `${ps.length} partitions`
    const bad = ps.filter(p => p.partitionErrorCode !== 0 || p.leader < 0)
    if (bad.length > 0) return show(bad)
  })
  await check('admin describeCluster: three brokers, a live controller', async () => {
    const c = await admin.describeCluster()
    if (c.brokers.length !== 3) return `brokers ${show(c.brokers)}`
    if (!c.brokers.some(b => b.nodeId === c.controller)) return `controller ${c.controller}`
  })
  await check('admin describeConfigs of a topic', async () => {
    const r = await admin.describeConfigs({
      resources: [{ type: 2, name: ORDERS }], includeSynonyms: false,
    })
    const res = r.resources[0]
    if (res.errorCode !== 0) return `error ${res.errorCode} ${res.errorMessage}`
    if (!Array.isArray(res.configEntries)) return show(res)
  })
}

async function produceChecks(producer, admin, startMs) {
  for (const [i, s] of SENDS.entries()) {
    const name = `producer send gzip acks=${s.acks}` +
      ` (${s.messages.length} records, keys, headers)`
    await check(name, async () => {
      const r = await producer.send({
        topic: ORDERS, acks: s.acks, compression: CompressionTypes.GZIP, messages: s.messages,
      })
      if (s.acks === 0) return // no answer: checked with ListOffsets below
      const base = SENDS.slice(0, i).reduce((n, x) => n + x.count, 0)
      const got = r.map(x => [x.partition, x.errorCode, x.baseOffset]).sort()
      const want = [0, 1, 2].map(p => [p, 0, `${base}`])
      if (!same(got, want)) return `answered ${show(r)}`
    })
  }
  await check('no response to the acks=0 Produce', async () => {
    // The later sends went down the same connections, and a connection's
    // answers come in order, so a stray answer would have been seen.
    if (unmatchedResponses > 0) return `${unmatchedResponses} unmatched responses logged`
  })
  await check(`admin fetchTopicOffsets (ListOffsets): low 0, high ${PER_PARTITION}`, async () => {
    let last = null
    // acks=0 had no answer; allow its records a moment to land.
    const ok = await until(async () => {
      last = (await admin.fetchTopicOffsets(ORDERS)).sort((a, b) => a.partition - b.partition)
      return last.every(p => p.low === '0' && p.high === `${PER_PARTITION}`)
    }, 10000)
    if (!ok) return `offsets ${show(last)}`
  })
  await check('admin fetchTopicOffsetsByTimestamp before the first send: 0', async () => {
    const r = await admin.fetchTopicOffsetsByTimestamp(ORDERS, startMs - 60000)
    if (!r.every(p => p.offset === '0')) return show(r)
  })
}

async function fetchChecks() {
  await check('kafkajs Fetch v11 (no group) reads every record back', async () => {
    const got = await fetchRecords(ORDERS, [0, 1, 2], 0, 1000)
    const want = expectedOrders()
    for (let p = 0; p < PARTITIONS; p++) {
      if (!got[p]) return `no answer for partition ${p}`
      if (got[p].hwm !== `${PER_PARTITION}`) return `partition ${p} high watermark ${got[p].hwm}`
      const rs = got[p].records.map(({ partition, offset, key, value, headers }) =>
        ({ partition, offset, key, value, headers }))
      if (!same(rs, want[p])) return `partition ${p}: got ${show(rs)} want ${show(want[p])}`
    }
  })
  await check('kafkajs Fetch v11 from offset 6 starts at the batch holding it', async () => {
    const got = await fetchRecords(ORDERS, [1], 6, 1000)
    const offsets = got[1].records.map(r => Number(r.offset))
    // Whole batches come back: the acks=1 batch holds offsets 5 and 6.
    if (!same(offsets, [5, 6])) return `offsets ${show(offsets)}`
  })
  await check('kafkajs Fetch v11 at the high watermark waits, answers empty', async () => {
    const t0 = Date.now()
    const got = await fetchRecords(ORDERS, [0], PER_PARTITION, 600)
    const took = Date.now() - t0
    if (got[0].records.length !== 0) return `records ${show(got[0].records)}`
    if (took < 400) return `answered after ${took} ms, asked to wait 600`
  })
}

async function keyedChecks(producer) {
  const keys = ['alpha', 'bravo', 'charlie', 'delta', 'echo']
  const messages = []
  for (let i = 0; i < 6; i++) {
    for (const k of keys) messages.push({ key: k, value: `${k}-${i}` })
  }
  await check('default partitioner: each key on one partition, in order', async () => {
    await producer.send({ topic: KEYED, acks: -1, compression: CompressionTypes.GZIP, messages })
    const got = await fetchRecords(KEYED, [0, 1, 2], 0, 1000)
    const seen = {}
    let total = 0
    for (const p of Object.keys(got)) {
      for (const r of got[p].records) {
        total++
        seen[r.key] = seen[r.key] || { partitions: new Set(), values: [] }
        seen[r.key].partitions.add(p)
        seen[r.key].values.push(r.value)
      }
    }
    if (total !== messages.length) return `${total} records, sent ${messages.length}`
    for (const k of keys) {
      if (seen[k].partitions.size !== 1) return `${k} on partitions ${[...seen[k].partitions]}`
      const want = Array.from({ length: 6 }, (_, i) => `${k}-${i}`)
      if (!same(seen[k].values, want)) return `${k}: ${show(seen[k].values)}`
    }
  })
}

async function idempotentChecks() {
  const p = kafka.producer({
    idempotent: true, maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  })
  await check('idempotent producer connects (InitProducerId)', () => p.connect())
  await check('idempotent producer: two gzip sends, sequences 0 and 5', async () => {
    for (const s of [0, 1]) {
      const r = await p.send({
        topic: IDEM, compression: CompressionTypes.GZIP,
        messages: Array.from({ length: 5 }, (_, i) => ({ key: `i${i}`, value: `idem-${s}-${i}` })),
      })
      if (r[0].errorCode !== 0 || r[0].baseOffset !== `${5 * s}`) return `send ${s}: ${show(r)}`
    }
    const got = await fetchRecords(IDEM, [0], 0, 1000)
    const rs = got[0].records
    if (rs.length !== 10) return `${rs.length} records`
    if (!rs.every(r => Number(r.producerId) >= 0)) {
      return `producer ids ${show(rs.map(r => r.producerId))}`
    }
    const seqs = [...new Set(rs.map(r => r.firstSequence))]
    if (!same(seqs, [0, 5])) return `first sequences ${show(seqs)}`
  })
  await p.disconnect()
}

async function main() {
  const startMs = Date.now()
  const admin = kafka.admin()
  await check('admin connects (ApiVersions v2, Metadata)', () => admin.connect())
  await adminChecks(admin)

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await check('producer connects', () => producer.connect())
  await produceChecks(producer, admin, startMs)
  if (process.env.EXPECT) {
    const lines = expectedOrders().flat().map(kcatLine)
    fs.writeFileSync(process.env.EXPECT, lines.join('\n') + '\n')
  }

  await check('Fetch client connects', () => fetchConnect())
  await fetchChecks()
  await keyedChecks(producer)
  await producer.disconnect()
  await idempotentChecks()

  await check('admin deleteTopics removes a topic', async () => {
    await admin.deleteTopics({ topics: [SCRATCH] })
    const gone = await until(async () => !(await admin.listTopics()).includes(SCRATCH), 10000)
    if (!gone) return `${SCRATCH} still listed`
  })
  if (fetchCluster) await fetchCluster.disconnect()
  await admin.disconnect()
}

setTimeout(() => {
  fail('watchdog', `flow still running after ${WATCHDOG_MS} ms`)
  process.exit(1)
}, WATCHDOG_MS).unref()

main().then(
  () => process.exit(failed === 0 && passed > 0 ? 0 : 1),
  e => { fail('flow', e.stack); process.exit(1) })
