// More Node clients against redlock-proxy (REDLOCK_ADDR=host:port): each
// connects with its own handshake (HELLO 3 where it sends one), then takes,
// contends for and releases a lock.
import { test } from "node:test";
import assert from "node:assert/strict";
import IORedis6 from "ioredis6";
import { createClient as createClient4 } from "redis4";
import { createClient as createClient5 } from "redis5";

const addr = process.env.REDLOCK_ADDR;
const i = addr.lastIndexOf(":");
const host = addr.slice(0, i), port = Number(addr.slice(i + 1));
const UNLOCK = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`;

test("ioredis 6: HELLO 3, then a lock cycle in RESP3", async () => {
  const c = new IORedis6({ host, port, maxRetriesPerRequest: 0 });
  try {
    assert.match(await c.client("INFO"), /resp=3/);
    assert.equal(await c.set("n6:a", "tok", "PX", 5000, "NX"), "OK");
    assert.equal(await c.set("n6:a", "other", "PX", 5000, "NX"), null);
    assert.equal(await c.get("n6:a"), "tok");
    assert.equal(await c.eval(UNLOCK, 1, "n6:a", "tok"), 1);
    assert.equal(await c.get("n6:a"), null);
  } finally {
    await c.quit();
  }
});

test("ioredis 6: the native lock commands through call, as README shows them", async () => {
  const c = new IORedis6({ host, port, maxRetriesPerRequest: 0 });
  try {
    const t1 = await c.call("LOCK.ACQUIRE", "n6:native", "o1", 5000);
    assert.ok(Number.isInteger(t1) && t1 > 0, `token ${t1}`);
    assert.equal(await c.call("LOCK.ACQUIRE", "n6:native", "o2", 5000), null);
    assert.equal(await c.call("LOCK.TOKEN", "n6:native"), t1);
    assert.equal(await c.call("LOCK.RELEASE", "n6:native", "o1"), 1);
    const t2 = await c.call("LOCK.ACQUIRE", "n6:native", "o2", 5000);
    assert.ok(t2 > t1, `token ${t2} after ${t1}`);
    assert.equal(await c.call("LOCK.RELEASE", "n6:native", "o2"), 1);

    // WAIT: granted at the holder's release, on another connection.
    const other = new IORedis6({ host, port, maxRetriesPerRequest: 0 });
    try {
      await c.call("LOCK.ACQUIRE", "n6:wait", "o1", 5000);
      setTimeout(() => c.call("LOCK.RELEASE", "n6:wait", "o1"), 300);
      const t3 = await other.call("LOCK.ACQUIRE", "n6:wait", "o2", 30000, "WAIT", 5000);
      assert.ok(t3 > t2, `WAIT token ${t3} after ${t2}`);
      assert.equal(await c.call("LOCK.ACQUIRE", "n6:wait", "o3", 30000, "WAIT", 200), null);
      await other.call("LOCK.RELEASE", "n6:wait", "o2");
      // SESSION: held past its TTL while its connection is open, released when it closes.
      assert.ok((await other.call("LOCK.ACQUIRE", "n6:session", "o1", 3000, "SESSION")) > t3);
      await new Promise((r) => setTimeout(r, 4000));
      assert.notEqual(await c.call("LOCK.TOKEN", "n6:session"), null);
    } finally {
      other.disconnect();
    }
    for (let i = 0; i < 100 && (await c.call("LOCK.TOKEN", "n6:session")) !== null; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await c.call("LOCK.TOKEN", "n6:session"), null);
  } finally {
    await c.quit();
  }
});

test("node-redis 4: CLIENT SETINFO handshake, then a lock cycle", async () => {
  const c = createClient4({ socket: { host, port } });
  await c.connect();
  try {
    assert.match(await c.sendCommand(["CLIENT", "INFO"]), /lib-name=node-redis/);
    assert.equal(await c.set("r4:a", "tok", { NX: true, PX: 5000 }), "OK");
    assert.equal(await c.set("r4:a", "other", { NX: true, PX: 5000 }), null);
    assert.equal(await c.eval(UNLOCK, { keys: ["r4:a"], arguments: ["tok"] }), 1);
    assert.equal(await c.get("r4:a"), null);
  } finally {
    await c.quit();
  }
});

test("node-redis 5 with RESP3: HELLO 3 handshake, then a lock cycle", async () => {
  const c = createClient5({ socket: { host, port }, RESP: 3 });
  await c.connect();
  try {
    assert.match(await c.sendCommand(["CLIENT", "INFO"]), /resp=3 lib-name=node-redis/);
    assert.equal(await c.sendCommand(["SET", "r5:a", "tok", "NX", "PX", "5000"]), "OK");
    assert.equal(await c.sendCommand(["SET", "r5:a", "other", "NX", "PX", "5000"]), null);
    assert.equal(await c.sendCommand(["EVAL", UNLOCK, "1", "r5:a", "tok"]), 1);
    assert.equal(await c.get("r5:a"), null);
  } finally {
    await c.close();
  }
});
