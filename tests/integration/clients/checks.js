// The [PASS]/[FAIL] lines the integration scripts count (run_flow in
// tests/integration/lib.sh), for the node client programs here:
//   check(name, ok[, why])  prints one line, with why (a string, or any
//                           value, shown as JSON) after a failure;
//   show(v)                 JSON, bigints as "123n" and Maps as arrays;
//   exitCode()              1 once any check failed, else 0.
'use strict'

let failed = 0

function check (name, ok, why) {
  if (ok) {
    console.log(`[PASS] ${name}`)
  } else {
    failed++
    const text = typeof why === 'string' ? why : show(why)
    console.log(`[FAIL] ${name}${why === undefined ? '' : `: ${text}`}`)
  }
  return ok
}

const show = v => JSON.stringify(v, (k, x) =>
  typeof x === 'bigint' ? `${x}n` : x instanceof Map ? [...x] : x)

const exitCode = () => (failed ? 1 : 0)

module.exports = { check, show, exitCode }
