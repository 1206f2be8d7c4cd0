// @platformatic/kafka 1.35.0 (npm) moving a partition with Kafka's
// AlterPartitionReassignments v0 and watching it with
// ListPartitionReassignments v0 (the client's exported protocol APIs and
// its Connection; its Admin class has no method for them). The script
// that runs this has paused the broker being added, so the move stays in
// progress while it is looked at:
//   - partition PART of TOPIC moves to [NEW, its replicas but the first];
//   - the list (all topics, then this topic's partition) shows it, with
//     NEW adding and the old first replica removing;
//   - a cancel (Replicas null) answers NONE, a second one
//     NO_REASSIGNMENT_IN_PROGRESS (85); duplicates, an unknown broker and
//     an unknown partition answer INVALID_REPLICA_ASSIGNMENT (39) or
//     UNKNOWN_TOPIC_OR_PARTITION (3);
//   - the move is started again and left running.
// Prints "[PASS] name" / "[FAIL] name: why" lines; exits non-zero if any
// check failed.
//
//   BOOTSTRAP=host:port TOPIC=t PART=0 NEW=4 node reassign_flow.mjs
import {
  Admin,
  Connection,
  alterPartitionReassignmentsV0,
  listPartitionReassignmentsV0
} from '@platformatic/kafka'
import { check, show, exitCode } from './checks.js'

const [host, port] = (process.env.BOOTSTRAP || '').split(',')[0].split(':')
const TOPIC = process.env.TOPIC
const PART = Number(process.env.PART || 0)
const NEW = Number(process.env.NEW || 4)
if (!host || !port || !TOPIC) {
  console.error('usage: BOOTSTRAP=host:port TOPIC=t [PART=0] [NEW=4] node reassign_flow.mjs')
  process.exit(2)
}

const within = (ms, what, promise) => Promise.race([
  promise,
  new Promise((resolve, reject) =>
    setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref())
])

// Partition errors come back as the client's ResponseError; its response
// is still there, so every partition's code can be read.
const alter = async (conn, partitions) => {
  try {
    return await within(15000, 'alter',
      alterPartitionReassignmentsV0.api.async(conn, 30000, false,
        [{ name: TOPIC, partitions }]))
  } catch (e) {
    if (e.response) return e.response
    throw e
  }
}
const codes = r => r.responses.flatMap(t => t.partitions.map(p => p.errorCode))
const list = (conn, topics) => within(15000, 'list',
  listPartitionReassignmentsV0.api.async(conn, 30000, topics))
const ours = r => r.topics.filter(t => t.name === TOPIC)
  .flatMap(t => t.partitions).filter(p => p.partitionIndex === PART)

async function main () {
  const admin = new Admin({ clientId: 'cairn-reassign-md', bootstrapBrokers: [`${host}:${port}`] })
  const md = await within(15000, 'metadata', admin.metadata({ topics: [TOPIC], forceUpdate: true }))
  await admin.close()
  const replicas = md.topics.get(TOPIC).partitions[PART].replicas
  const target = [NEW, ...replicas.slice(1)]
  const conn = new Connection('cairn-reassign')
  await within(10000, 'connect', conn.connect(host, Number(port)))

  let r = await alter(conn, [{ partitionIndex: PART, replicas: target }])
  check(`alter ${TOPIC}-${PART} ${show(replicas)} -> ${show(target)}`,
    r.errorCode === 0 && show(codes(r)) === '[0]', show(r))

  let l = await list(conn, null)
  let p = ours(l)
  check('list (all topics) shows the move in progress',
    l.errorCode === 0 && p.length === 1 && show(p[0].addingReplicas) === show([NEW]) &&
      show(p[0].removingReplicas) === show([replicas[0]]) &&
      show(p[0].replicas) === show([...target, replicas[0]]), show(l))
  l = await list(conn, [{ name: TOPIC, partitionIndexes: [PART] }])
  check('list (this partition) shows it too', ours(l).length === 1, show(l))
  l = await list(conn, [{ name: 'no-such-topic', partitionIndexes: [0] }])
  check('list of an unknown topic is empty, as Kafka answers', l.errorCode === 0 && l.topics.length === 0, show(l))

  r = await alter(conn, [{ partitionIndex: PART, replicas: null }])
  check('cancel answers NONE', show(codes(r)) === '[0]', show(r))
  r = await alter(conn, [{ partitionIndex: PART, replicas: null }])
  check('a second cancel answers NO_REASSIGNMENT_IN_PROGRESS', show(codes(r)) === '[85]', show(r))
  l = await list(conn, null)
  check('nothing listed after the cancel', ours(l).length === 0, show(l))

  r = await alter(conn, [
    { partitionIndex: PART, replicas: [replicas[0], replicas[0]] },
    { partitionIndex: PART + 1, replicas: [replicas[0], 99] },
    { partitionIndex: 9999, replicas: [replicas[0]] }
  ])
  check('bad targets: INVALID_REPLICA_ASSIGNMENT x2, UNKNOWN_TOPIC_OR_PARTITION',
    show(codes(r)) === '[39,39,3]', show(r))

  r = await alter(conn, [{ partitionIndex: PART, replicas: target }])
  check('the move started again', show(codes(r)) === '[0]', show(r))
  await conn.close()
}

main().catch(e => check('flow', false, e.stack || e))
  .finally(() => process.exit(exitCode()))
