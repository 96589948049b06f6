/**
 * Records decode their strings in JavaScript, not through msgpackr's native extractor. The
 * extractor reads a record's strings as one and hands each field out as a slice of it, and V8
 * keeps the whole of it alive for as long as any slice: every string field of an SKU, job or
 * row kept in memory kept all of its record's strings alive. With 550,000 SKUs the live heap
 * was 768 MB with the extractor and 413 MB without, and the load mix was no slower
 * (docs/decisions.md, "Store"). msgpackr reads the switch when it is first imported,
 * so this module is imported before lmdb (which imports msgpackr).
 */
process.env.MSGPACKR_NATIVE_ACCELERATION_DISABLED = 'true';
