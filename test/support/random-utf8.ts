import { seededRandom } from "./seeded-random.js";

/**
 * Byte streams for decoder tests, from a fixed seed: `runs` streams of 40 pieces each (real
 * characters of every UTF-8 length from `pieces`, or one stray byte with probability `strayShare`),
 * each cut into chunks of `minChunk` to `minChunk + 4` bytes at random places.
 */
export function randomUtf8Streams(options: { seed: number; runs: number; pieces: string[]; strayShare: number; minChunk: number }): Uint8Array[][] {
  const random = seededRandom(options.seed);
  const pieces = options.pieces.map((text) => Buffer.from(text));
  const streams: Uint8Array[][] = [];
  for (let run = 0; run < options.runs; run++) {
    const stream: number[] = [];
    for (let i = 0; i < 40; i++) {
      if (random() < options.strayShare) stream.push(Math.floor(random() * 256));
      else stream.push(...pieces[Math.floor(random() * pieces.length)]!);
    }
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < stream.length; ) {
      const size = options.minChunk + Math.floor(random() * 5);
      chunks.push(Uint8Array.from(stream.slice(at, at + size)));
      at += size;
    }
    streams.push(chunks);
  }
  return streams;
}
