// @platformatic/kafka 1.35.0's DescribeLogDirs and DescribeCluster against
// a running Cairn cluster: Admin.describeLogDirs (its public call, one
// DescribeLogDirs v4 per broker) and the client's own DescribeCluster v0
// and v1 request functions over its Connection (its Admin has no
// describeCluster). Checks every broker's log dir, the topic's partitions
// with sizes, lag 0 and the dir's totals, and the cluster's brokers.
//
// Prints one "[PASS] name" or "[FAIL] name: why" line per check and exits
// non-zero if any check failed.
//
//   BOOTSTRAP=host:port,... TOPIC=name node cluster_platformatic.mjs
import { Admin, Connection, describeClusterV0, describeClusterV1 } from '@platformatic/kafka'
import { check, exitCode } from './checks.js'

const brokers = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)
const TOPIC = process.env.TOPIC || 'dirs'

async function main () {
  const admin = new Admin({ clientId: 'cluster-platformatic', bootstrapBrokers: brokers })
  const described = await admin.describeLogDirs({ topics: [{ name: TOPIC, partitions: [0, 1, 2] }] })
  check('describeLogDirs answers for every broker', described.length === brokers.length, described.map(d => d.broker))
  for (const d of described) {
    const dir = d.results[0]
    const parts = dir.topics.filter(t => t.name === TOPIC).flatMap(t => t.partitions)
    check(`broker ${d.broker}: one log dir, absolute, with its totals`,
      d.results.length === 1 && dir.logDir.startsWith('/') &&
      BigInt(dir.totalBytes) > 0n && BigInt(dir.usableBytes) > 0n &&
      BigInt(dir.usableBytes) <= BigInt(dir.totalBytes), dir)
    check(`broker ${d.broker}: its two replicas of ${TOPIC}, sizes > 0, lag 0`,
      parts.length === 2 && parts.every(p => BigInt(p.partitionSize) > 0n &&
        BigInt(p.offsetLag) === 0n && p.isFutureKey === false), parts)
  }
  await admin.close()

  for (const b of brokers) {
    const [host, port] = b.split(':')
    const conn = new Connection('cluster-platformatic')
    await conn.connect(host, Number(port))
    for (const [v, api] of [[0, describeClusterV0], [1, describeClusterV1]]) {
      const r = v === 0 ? await api.api.async(conn, false) : await api.api.async(conn, false, 1)
      const ids = r.brokers.map(x => x.brokerId).sort()
      check(`DescribeCluster v${v} from ${b}: three brokers, a live controller`,
        r.errorCode === 0 && ids.join() === '1,2,3' && ids.includes(r.controllerId) &&
        r.clusterId === 'cairn' && r.brokers.every(x => x.host === '127.0.0.1'), r)
    }
    let refused = null
    try {
      await describeClusterV1.api.async(conn, false, 2)
    } catch (e) {
      refused = e.response ? e.response.errorCode : String(e)
    }
    check(`DescribeCluster v1 for controllers from ${b}: MISMATCHED_ENDPOINT_TYPE`, refused === 114, refused)
    await new Promise(resolve => conn.close(resolve))
  }
}

const watchdog = setTimeout(() => { console.log('[FAIL] watchdog'); process.exit(1) }, 120000)
main().then(() => {
  clearTimeout(watchdog)
  process.exit(exitCode())
}, e => {
  console.log(`[FAIL] ${e.stack}`)
  process.exit(1)
})
