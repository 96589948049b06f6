/** The list engine of spec 4.0.1, one module for every list endpoint. */
export * from './fields.js';
export { listQuerySchema } from './schema.js';
export { parseListQuery } from './query.js';
export { parseSearch } from './search.js';
export { executeList, type OrderPlan } from './execute.js';
export { OrderedIndex } from './ordered-index.js';
export { SortedChunks } from './sorted-chunks.js';
export { SubstringIndex, type KeysHolding } from './substring-index.js';
export { collectionSource } from './collection-source.js';
