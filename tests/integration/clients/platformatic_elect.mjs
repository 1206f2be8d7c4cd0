// ElectLeaders (API 43) v2 through @platformatic/kafka 1.35.0's own
// protocol layer: its Connection (ApiVersions, request header v2, framing),
// Writer and Reader, with the request and response laid out by the
// client's createAPI() as its built-in APIs are. The client lists the API
// key (protocol/apis.js) but ships no ElectLeaders call, and neither does
// any other client here (kafkajs 2.2.4 marks it not implemented,
// confluent-kafka 1.7.0 / librdkafka 2.0.2 and kafka-python 2.0.2 lack
// it), so the layout below follows Kafka's ElectLeadersRequest.json.
// Prints the response as one JSON line.
//
//   BOOTSTRAP=host:port,... node platformatic_elect.mjs TYPE [TOPIC P,P...]
//   (TYPE 0 preferred, 1 unclean; no TOPIC: every partition, a null list)
import { Connection, createAPI, Writer } from '@platformatic/kafka'

const [type, topic, parts] = process.argv.slice(2)
const broker = (process.env.BOOTSTRAP || '').split(',').filter(Boolean)[0]
if (broker === undefined || type === undefined) {
  console.error('usage: BOOTSTRAP=host:port node platformatic_elect.mjs TYPE [TOPIC P,...]')
  process.exit(2)
}

function createRequest (electionType, topicPartitions, timeoutMs) {
  return Writer.create()
    .appendInt8(electionType)
    .appendArray(topicPartitions, (w, t) => {
      w.appendString(t.topic).appendArray(t.partitions, (w, p) => w.appendInt32(p), true, false)
    })
    .appendInt32(timeoutMs)
    .appendTaggedFields()
}

function parseResponse (_correlationId, _apiKey, _apiVersion, reader) {
  return {
    throttleTimeMs: reader.readInt32(),
    errorCode: reader.readInt16(),
    results: reader.readArray(r => ({
      topic: r.readString(),
      partitions: r.readArray(r => ({
        partitionId: r.readInt32(),
        errorCode: r.readInt16(),
        errorMessage: r.readNullableString()
      }))
    }))
  }
}

const electLeadersV2 = createAPI(43, 2, createRequest, parseResponse)

const [host, port] = broker.split(':')
const conn = new Connection('platformatic-elect')
const watchdog = setTimeout(() => { console.error('timed out'); process.exit(1) }, 60000)
try {
  await conn.connect(host, Number(port))
  const list = topic === undefined
    ? null
    : [{ topic, partitions: parts.split(',').map(Number) }]
  const resp = await electLeadersV2.async(conn, Number(type), list, 30000)
  console.log(JSON.stringify(resp))
} catch (err) {
  console.error(err)
  process.exitCode = 1
} finally {
  clearTimeout(watchdog)
  await conn.close()
}
