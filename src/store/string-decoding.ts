/**
 * Records decode their strings in JavaScript, not through msgpackr's native extractor. The
 * extractor reads a record's strings as one and hands each field out as a slice of it, and V8
 * keeps the whole of it alive for as long as any slice: the SKUs, jobs and rows this process
 * keeps in memory held a copy of their record's every string per field kept. With 550,000 SKUs
 * the live heap was 768 MB with the extractor and 413 MB without, and the mix of issue 22 was
 * no slower (docs/benchmarks.md, "Fifth round"). msgpackr reads the switch when it is first
 * imported, so this module is imported before lmdb (which imports msgpackr).
 */
process.env.MSGPACKR_NATIVE_ACCELERATION_DISABLED = 'true';
