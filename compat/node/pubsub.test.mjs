// Lock wake-ups with Node clients: a waiter subscribes through one proxy
// replica (REDLOCK_ADDR2), the holder releases through another
// (REDLOCK_ADDR); the message crosses through the backends and arrives once.
import { test } from "node:test";
import assert from "node:assert/strict";
import IORedis from "ioredis";
import { createClient as createClient5 } from "redis5";

function hostPort(addr) {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}
const one = hostPort(process.env.REDLOCK_ADDR);
const two = hostPort(process.env.REDLOCK_ADDR2 ?? process.env.REDLOCK_ADDR);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("ioredis 5: SUBSCRIBE on one replica, PUBLISH on another, delivered once", async () => {
  const sub = new IORedis({ ...two, maxRetriesPerRequest: 0 });
  const pub = new IORedis({ ...one, maxRetriesPerRequest: 0 });
  try {
    const got = [];
    sub.on("message", (channel, message) => got.push([channel, message]));
    assert.equal(await sub.subscribe("lock-released:{a}"), 1);
    // In subscriber mode, only subscription commands and PING run.
    await assert.rejects(sub.get("x"), /subscriber mode|Connection in subscriber mode|only \(P\|S\)SUBSCRIBE/);
    assert.ok((await pub.publish("lock-released:{a}", "0")) >= 1);
    for (let i = 0; i < 100 && got.length === 0; i++) await sleep(20);
    await sleep(200); // any duplicate would be here by now
    assert.deepEqual(got, [["lock-released:{a}", "0"]]);
  } finally {
    sub.disconnect();
    pub.disconnect();
  }
});

test("ioredis 5: PSUBSCRIBE (Spring's listener) gets pmessage", async () => {
  const sub = new IORedis({ ...two, maxRetriesPerRequest: 0 });
  const pub = new IORedis({ ...one, maxRetriesPerRequest: 0 });
  try {
    const got = [];
    sub.on("pmessage", (pattern, channel, message) => got.push([pattern, channel, message]));
    assert.equal(await sub.psubscribe("registry-channel*"), 1);
    await pub.publish("registry-channel", "registry:lock-1");
    await pub.publish("other", "not for us");
    for (let i = 0; i < 100 && got.length === 0; i++) await sleep(20);
    await sleep(200);
    assert.deepEqual(got, [["registry-channel*", "registry-channel", "registry:lock-1"]]);
    assert.equal(await sub.punsubscribe("registry-channel*"), 0);
  } finally {
    sub.disconnect();
    pub.disconnect();
  }
});

test("node-redis 5 in RESP3: push messages while the connection keeps working", async () => {
  const sub = createClient5({ socket: two, RESP: 3 });
  const pub = createClient5({ socket: one });
  await sub.connect();
  await pub.connect();
  try {
    const got = [];
    await sub.subscribe("redisson_lock__channel:{r3}", (message, channel) => got.push([channel, message]));
    // RESP3 allows ordinary commands on a subscribed connection.
    assert.equal(await sub.set("r3:lock", "tok", { NX: true, PX: 5000 }), "OK");
    await pub.publish("redisson_lock__channel:{r3}", "0");
    for (let i = 0; i < 100 && got.length === 0; i++) await sleep(20);
    await sleep(200);
    assert.deepEqual(got, [["redisson_lock__channel:{r3}", "0"]]);
    await sub.unsubscribe("redisson_lock__channel:{r3}");
  } finally {
    await sub.quit();
    await pub.quit();
  }
});
