// Node lock clients against redlock-proxy (REDLOCK_ADDR=host:port), run by
// compat_test.go: ioredis 5 as the connection, node-redlock 5 with the proxy
// as its one client.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import Redis from "ioredis";
import Redlock from "redlock";

const addr = process.env.REDLOCK_ADDR;
const i = addr.lastIndexOf(":");
const client = new Redis({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)), maxRetriesPerRequest: 0 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
after(() => client.quit());

test("ioredis 5 connects (its INFO ready check passes) and pings", async () => {
  assert.equal(await client.ping(), "PONG");
  assert.equal(client.status, "ready");
});

test("redlock 5: acquire, contend, extend, release", async () => {
  const redlock = new Redlock([client], { retryCount: 0 });
  const lock = await redlock.acquire(["nr:a"], 2000);
  await assert.rejects(redlock.acquire(["nr:a"], 2000), /quorum|attempts/i);
  assert.equal(await client.get("nr:a"), lock.value);
  await sleep(300);
  const extended = await lock.extend(5000);
  const pttl = await client.pttl("nr:a");
  assert.ok(pttl > 4500 && pttl <= 5000, `PTTL after extend to 5s: ${pttl}`);
  await extended.release();
  assert.equal(await client.get("nr:a"), null);
  const again = await redlock.acquire(["nr:a"], 1000);
  await again.release();
});

test("redlock 5: a lock over several resources is all or nothing", async () => {
  const redlock = new Redlock([client], { retryCount: 0 });
  const lock = await redlock.acquire(["nr:m1", "nr:m2"], 3000);
  assert.equal(await client.get("nr:m1"), lock.value);
  assert.equal(await client.get("nr:m2"), lock.value);
  await assert.rejects(redlock.acquire(["nr:m3", "nr:m2"], 3000));
  assert.equal(await client.get("nr:m3"), null, "a failed multi-resource acquire must leave nothing behind");
  await lock.release();
  assert.equal(await client.get("nr:m1"), null);
  assert.equal(await client.get("nr:m2"), null);
});

test("redlock 5: using() extends the lock while the routine runs", async () => {
  const redlock = new Redlock([client], { retryCount: 0 });
  let value;
  await redlock.using(["nr:u"], 1000, { automaticExtensionThreshold: 500 }, async (signal) => {
    value = await client.get("nr:u");
    await sleep(1800); // past the 1 s lock: only automatic extension keeps it
    assert.equal(signal.aborted, false, String(signal.error));
    assert.equal(await client.get("nr:u"), value, "the lock is still ours after 1.8 s");
  });
  assert.ok(value);
  assert.equal(await client.get("nr:u"), null, "released when the routine ends");
});
