/**
 * A 64-bit checksum of bytes, for telling a corrupt cache entry from a whole one (src/code-cache.ts
 * checks a code cache entry's data with it before V8 sees the data). Rules:
 * - it detects corruption (a flipped bit, a zero-filled tail, a cut), not tampering: a signed
 *   cache's HMAC is for that (src/cache-dir.ts);
 * - computed by a WebAssembly function (./wasm/checksum.wat states the algorithm), ~0.1 ms for the
 *   0.5 MB of an entry, compiled on first use (~0.3 ms); where WebAssembly cannot run
 *   (`node --jitless`) by the same algorithm in JavaScript (`checksumInJs`, ~6 ms a MB cold).
 *   Neither node:zlib's CRC-32 nor node:crypto would do at start: each loads Node's stream
 *   modules (docs/performance.md, "Eleventh pass");
 * - the result is 16 hex digits.
 */
import { WASM_BASE64 } from "./wasm/checksum.generated.js";

/** The part of the WebAssembly API used here (the project's types have no DOM library). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: object, imports: { env: { memory: WasmMemory } }) => { exports: Record<string, unknown> };
}

const PAGE = 65536;
const PRIME = 0x01000193;
const OFFSET = 0x811c9dc5;

interface Checksummer {
  memory: WasmMemory;
  checksum: (ptr: number, len: number) => bigint;
}

/** The compiled module; null when WebAssembly cannot run here. */
let wasm: Checksummer | null | undefined;

/** The checksum of `bytes` (rules above); bytes inside a `checksumBuffer` are not copied. */
export function checksum(bytes: Uint8Array): string {
  if (wasm === undefined) wasm = instantiate(bytes.length);
  if (wasm === null) return checksumInJs(bytes);
  if (bytes.buffer === wasm.memory.buffer) return hex(wasm.checksum(bytes.byteOffset, bytes.length));
  const memory = withRoomFor(wasm, bytes.length);
  new Uint8Array(memory.buffer, 0, bytes.length).set(bytes);
  return hex(wasm.checksum(0, bytes.length));
}

/**
 * A buffer of `size` bytes in the WebAssembly function's own memory, for bytes that will be
 * checksummed (a code cache entry, src/code-cache.ts): `checksum` then reads them where they
 * are, and a start touches no second copy of them (~0.5 MB of fresh memory, ~2 ms of page
 * faults). It stays valid until the next `checksumBuffer` or `checksum` of bytes outside it,
 * either of which may grow the memory (which detaches every view of it). A plain buffer where
 * WebAssembly cannot run.
 */
export function checksumBuffer(size: number): Buffer {
  if (wasm === undefined) wasm = instantiate(size);
  if (wasm === null) return Buffer.allocUnsafeSlow(size);
  return Buffer.from(withRoomFor(wasm, size).buffer, 0, size);
}

/** The memory of `module`, grown to at least `size` bytes. */
function withRoomFor(module: Checksummer, size: number): WasmMemory {
  const { memory } = module;
  if (memory.buffer.byteLength < size) memory.grow(Math.ceil((size - memory.buffer.byteLength) / PAGE));
  return memory;
}

const hex = (sum: bigint) => BigInt.asUintN(64, sum).toString(16).padStart(16, "0");

/** The same checksum in JavaScript (./wasm/checksum.wat's algorithm). */
export function checksumInJs(bytes: Uint8Array): string {
  let a = OFFSET;
  let s = 0;
  const words = bytes.length >>> 2;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const step = (w: number) => {
    a = Math.imul(a ^ w, PRIME);
    s = (s + (w ^ (a >>> 15))) | 0;
  };
  for (let i = 0; i < words; i++) step(view.getInt32(i * 4, true));
  for (let i = words * 4; i < bytes.length; i++) step(bytes[i]);
  return (a >>> 0).toString(16).padStart(8, "0") + (s >>> 0).toString(16).padStart(8, "0");
}

function instantiate(size: number): Checksummer | null {
  const api = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  if (!api) return null;
  try {
    const memory = new api.Memory({ initial: Math.max(1, Math.ceil(size / PAGE)) });
    const instance = new api.Instance(new api.Module(Buffer.from(WASM_BASE64, "base64")), { env: { memory } });
    return { memory, checksum: instance.exports.checksum as Checksummer["checksum"] };
  } catch {
    return null;
  }
}
