/** A schema for a value or null: how the API's schemas, in the domain and in http, write an absent value. */
import Type, { type TSchema } from 'typebox';

/** A value or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
