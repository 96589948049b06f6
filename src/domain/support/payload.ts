/**
 * The JSON of a support issue's `payload` form field (spec 4.2 shows none, so docs/support.md
 * documents the fields chosen here): the schema the HTTP layer checks it against and the type
 * the outbox keeps, one read of the other.
 */
import Type, { type Static } from 'typebox';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

/** The JSON inside the `payload` form field. */
export const IssuePayloadSchema = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'One line saying what is wrong (not only spaces)' }),
    description: Type.Optional(Type.String({ maxLength: 20_000, description: 'What happened, what was expected, steps to reproduce' })),
    severity: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high'), Type.Literal('critical')], {
      default: 'normal', description: 'critical: the system is stopped; high: a function is down; normal: degraded; low: a question or cosmetic',
    })),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Free classification, e.g. bots, inventory, network' })),
    contact: Type.Optional(Type.Object(
      {
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
      },
      { additionalProperties: false, description: 'Who support may contact about this issue' },
    )),
    request_id: Type.Optional(Id('A request this issue is about')),
    box_id: Type.Optional(Type.Integer({ minimum: 1, description: 'A box this issue is about' })),
    carrier_id: Type.Optional(Id('A carrier this issue is about')),
    level_id: Type.Optional(Type.Integer({ minimum: 0, description: 'A level this issue is about' })),
    bot_id: Type.Optional(Type.Integer({ minimum: 0, description: 'A bot this issue is about' })),
  },
  { additionalProperties: false, description: 'The issue payload: JSON-stringified in the `payload` form field' },
);

export type IssuePayload = Static<typeof IssuePayloadSchema>;
export type Severity = NonNullable<IssuePayload['severity']>;
