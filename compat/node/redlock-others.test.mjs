// node-redlock 4.2.0 and @sesamecare-oss/redlock against redlock-proxy
// (REDLOCK_ADDR=host:port), each with the proxy as its one client.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import Redis from "ioredis";
import Redlock4 from "redlock4";
import { Redlock as Sesame } from "@sesamecare-oss/redlock";

const addr = process.env.REDLOCK_ADDR;
const i = addr.lastIndexOf(":");
const client = new Redis({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)), maxRetriesPerRequest: 0 });
after(() => client.quit());

test("node-redlock 4.2.0: lock, contend, extend, unlock, several resources", async () => {
  const redlock = new Redlock4([client], { retryCount: 0 });
  redlock.on("clientError", () => {});
  const lock = await redlock.lock(["n4:a", "n4:b"], 2000);
  assert.equal(await client.get("n4:a"), lock.value);
  assert.equal(await client.get("n4:b"), lock.value);
  await assert.rejects(redlock.lock("n4:b", 2000));
  const extended = await lock.extend(5000);
  assert.ok((await client.pttl("n4:a")) > 4500, "PTTL grew");
  await extended.unlock();
  assert.equal(await client.get("n4:a"), null);
  assert.equal(await client.get("n4:b"), null);
});

test("@sesamecare-oss/redlock: acquire, contend, extend, release (script SELECTs db 0)", async () => {
  const redlock = new Sesame([client], { retryCount: 0 });
  const lock = await redlock.acquire(["sc:a"], 2000);
  assert.equal(await client.get("sc:a"), lock.value);
  await assert.rejects(redlock.acquire(["sc:a"], 2000));
  const extended = await lock.extend(5000);
  assert.ok((await client.pttl("sc:a")) > 4500, "PTTL grew");
  await extended.release();
  assert.equal(await client.get("sc:a"), null);
});
