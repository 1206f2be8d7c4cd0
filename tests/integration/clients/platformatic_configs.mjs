// @platformatic/kafka 1.35.0's Admin.incrementalAlterConfigs (the one
// Node client with IncrementalAlterConfigs) against a running Cairn
// cluster: SET, APPEND and SUBTRACT on cleanup.policy, DELETE, read back
// with describeConfigs; an unknown config is INVALID_CONFIG.
// Prints [PASS]/[FAIL] lines; exits non-zero if any check failed.
//   node platformatic_configs.mjs BOOTSTRAP TOPIC
import { Admin } from '@platformatic/kafka'
import { check, exitCode } from './checks.js'

const [boot, topic] = process.argv.slice(2)
const admin = new Admin({ clientId: 'pk-configs', bootstrapBrokers: boot.split(',') })
const TOPIC_TYPE = 2
const inc = (configs) => admin.incrementalAlterConfigs({
  resources: [{ resourceType: TOPIC_TYPE, resourceName: topic, configs }]
})
const value = async (key) => {
  const d = await admin.describeConfigs({
    resources: [{ resourceType: TOPIC_TYPE, resourceName: topic, configurationKeys: [key] }]
  })
  const c = d[0].configs.find((x) => x.name === key)
  return c ? `${c.value} ${c.configSource}` : 'none'
}

// Each broker applies a change when it fetches the metadata, a moment
// after the controller commits it: poll until the value is want, up to 15 s.
const settles = async (key, want) => {
  const deadline = Date.now() + 15000
  for (;;) {
    const v = await value(key)
    if (v === want || Date.now() > deadline) return v === want
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const timer = setTimeout(() => { console.log('[FAIL] watchdog'); process.exit(1) }, 100000)
try {
  await inc([{ name: 'retention.ms', configOperation: 0, value: '7200000' }])
  check('SET retention.ms=7200000 (DYNAMIC_TOPIC_CONFIG)',
    await settles('retention.ms', '7200000 1'))
  await inc([{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }])
  check('APPEND compact to cleanup.policy gives delete,compact',
    await settles('cleanup.policy', 'delete,compact 1'))
  await inc([{ name: 'cleanup.policy', configOperation: 3, value: 'delete' }])
  check('SUBTRACT delete leaves compact', await settles('cleanup.policy', 'compact 1'))
  check('the earlier SET is kept (incremental)', await settles('retention.ms', '7200000 1'))
  await inc([{ name: 'retention.ms', configOperation: 1 },
    { name: 'cleanup.policy', configOperation: 1 }])
  check('DELETE returns retention.ms to its default (DEFAULT_CONFIG)',
    await settles('retention.ms', '604800000 5'))
  let err = null
  try {
    await inc([{ name: 'retention.ms', configOperation: 2, value: '1' }])
  } catch (e) { err = e }
  const code = err && err.errors && err.errors[0] ? JSON.stringify(err.errors[0].response ?? err.errors[0].message) : String(err)
  check(`APPEND to a non-list config is refused (${code})`,
    err !== null && /INVALID_CONFIG|40|not LIST/.test(code + String(err && err.message)))
} catch (e) {
  console.error(e)
  check(`no unexpected error: ${e.message}`, false)
}
clearTimeout(timer)
await admin.close()
process.exit(exitCode())
