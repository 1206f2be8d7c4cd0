// kafkajs 2.2.4's admin.alterConfigs (Kafka's legacy AlterConfigs: the
// set given replaces the topic's dynamic configs) and describeConfigs
// against a running Cairn cluster.
// Prints [PASS]/[FAIL] lines; exits non-zero if any check failed.
//   node kafkajs_configs.js BOOTSTRAP TOPIC
const { Kafka, ConfigResourceTypes, logLevel } = require('kafkajs')
const { check, exitCode } = require('./checks.js')

const [boot, topic] = process.argv.slice(2)
const kafka = new Kafka({ brokers: boot.split(','), logLevel: logLevel.NOTHING })
const admin = kafka.admin()
const describe = async () => {
  const d = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }]
  })
  const out = {}
  for (const c of d.resources[0].configEntries) out[c.configName] = c
  return out
}

// Each broker applies a change when it fetches the metadata, a moment
// after the controller commits it: poll until ok(configs), up to 15 s.
const eventually = async (ok) => {
  const deadline = Date.now() + 15000
  for (;;) {
    const c = await describe()
    if (ok(c) || Date.now() > deadline) return c
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const main = async () => {
  await admin.connect()
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{
      type: ConfigResourceTypes.TOPIC,
      name: topic,
      configEntries: [{ name: 'retention.bytes', value: '123456' },
        { name: 'max.message.bytes', value: '200000' }]
    }]
  })
  let c = await eventually((x) => x['retention.bytes'].configValue === '123456')
  check('alterConfigs sets retention.bytes and max.message.bytes',
    c['retention.bytes'].configValue === '123456' &&
    c['max.message.bytes'].configValue === '200000' &&
    c['retention.bytes'].configSource === 1)
  check('describeConfigs says the rest are defaults (segment.bytes)',
    c['segment.bytes'].isDefault === true || c['segment.bytes'].configSource === 5)
  let err = null
  try {
    await admin.alterConfigs({
      resources: [{
        type: ConfigResourceTypes.TOPIC,
        name: topic,
        configEntries: [{ name: 'min.insync.replicas', value: '0' }]
      }]
    })
  } catch (e) { err = e }
  check(`min.insync.replicas=0 is INVALID_CONFIG (${err && err.type})`,
    err !== null && err.type === 'INVALID_CONFIG')
  c = await describe()
  check('a refused change changes nothing', c['retention.bytes'].configValue === '123456')
  await admin.disconnect()
}
main().catch((e) => {
  console.error(e)
  check(`no unexpected error: ${e.message}`, false)
}).finally(() => process.exit(exitCode()))
