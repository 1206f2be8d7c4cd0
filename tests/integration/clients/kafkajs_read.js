// Reads partition 0 of TOPIC from its beginning with kafkajs 2.2.4 and
// prints one "offset value" line per record, for
// tests/integration/clients/bad_batches.py.
//
//   MODE=fetch    kafkajs's own Fetch v11 encoder and record batch decoder
//                 (its Cluster/Broker classes, as the consumer uses them)
//                 from offset 0 up to the high watermark: quick, no group.
//   MODE=consume  kafkajs's public consumer in a fresh group, subscribed
//                 fromBeginning, until EXPECT records arrived, then two
//                 seconds more to catch any extra; a consumer crash fails.
//
// Exits 0 when the read completed, else 1 with the reason on stderr.
//   MODE=fetch|consume BOOTSTRAP=host:port,... TOPIC=t EXPECT=n \
//       node kafkajs_read.js
'use strict'

const { Kafka, logLevel } = require('kafkajs')
const Cluster = require('kafkajs/src/cluster')
const { createLogger, LEVELS } = require('kafkajs/src/loggers')
const socketFactory = require('kafkajs/src/network/socketFactory')

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
const TOPIC = process.env.TOPIC
const MODE = process.env.MODE
const EXPECT = Number(process.env.EXPECT || 0)
const BUDGET_MS = 60000
const EXTRA_WAIT_MS = 2000

const logCreator = () => ({ namespace, level, log }) => {
  console.error(`kafkajs ${level} ${namespace} ${log.message}` +
    (log.error ? ` (${log.error})` : ''))
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function readByFetch() {
  const cluster = new Cluster({
    logger: createLogger({ level: LEVELS.WARN, logCreator }),
    socketFactory: socketFactory(),
    brokers,
    clientId: 'cairn-kafkajs-read',
    connectionTimeout: 3000,
    enforceRequestTimeout: true,
    retry: { retries: 5 },
  })
  await cluster.connect()
  try {
    await cluster.addTargetTopic(TOPIC)
    await cluster.refreshMetadata()
    const leader = cluster.findLeaderForPartitions(TOPIC, [0])
    const nodeId = Object.keys(leader)[0]
    const broker = await cluster.findBroker({ nodeId })
    const deadline = Date.now() + BUDGET_MS
    let offset = 0
    for (;;) {
      const rsp = await broker.fetch({
        replicaId: -1, isolationLevel: 1, maxWaitTime: 100, minBytes: 1,
        maxBytes: 10485760,
        topics: [{ topic: TOPIC,
          partitions: [{ partition: 0, fetchOffset: `${offset}`,
            maxBytes: 1048576 }] }],
      })
      const p = rsp.responses[0].partitions[0]
      if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode}`)
      for (const m of p.messages) {
        if (Number(m.offset) < offset) continue // earlier in a batch
        console.log(`${m.offset} ${m.value === null ? '' : m.value.toString()}`)
        offset = Number(m.offset) + 1
      }
      if (offset >= Number(p.highWatermark)) return
      if (Date.now() > deadline) throw new Error('high watermark not reached')
    }
  } finally {
    await cluster.disconnect()
  }
}

async function readByConsumer() {
  const kafka = new Kafka({ clientId: 'cairn-kafkajs-read', brokers,
    logLevel: logLevel.WARN, logCreator, retry: { retries: 5 } })
  const consumer = kafka.consumer({ groupId: `pv-${process.pid}-${Date.now()}` })
  let crashed = null
  consumer.on(consumer.events.CRASH, e => { crashed = e.payload.error })
  const seen = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (partition === 0) {
          seen.push(`${message.offset} ${message.value === null ? '' : message.value.toString()}`)
        }
      },
    })
    const deadline = Date.now() + BUDGET_MS
    while (seen.length < EXPECT && !crashed && Date.now() < deadline) {
      await sleep(100)
    }
    if (!crashed) await sleep(EXTRA_WAIT_MS) // anything more would show
  } finally {
    await consumer.disconnect()
  }
  for (const line of seen) console.log(line)
  if (crashed) throw new Error(`consumer crashed: ${crashed}`)
  if (seen.length < EXPECT) throw new Error(`${seen.length} of ${EXPECT} records`)
}

const watchdog = setTimeout(() => {
  console.error('kafkajs_read.js: out of time')
  process.exit(1)
}, BUDGET_MS + 20000)

;(MODE === 'fetch' ? readByFetch() : readByConsumer())
  .then(() => { clearTimeout(watchdog); process.exit(0) })
  .catch(e => {
    console.error(`kafkajs_read.js: ${e.name}: ${e.message}`)
    process.exit(1)
  })
