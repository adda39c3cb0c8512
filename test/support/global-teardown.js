export default async function globalTeardown() {
  await globalThis.__DDD_KIT_SERVERS__?.stop();
}
