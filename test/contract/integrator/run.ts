/** The integration as a program: settings from the environment, each kind's final status as JSON on stdout. */
import { runAllKinds } from './flow.js';

const baseUrl = process.env.BASE_URL;
const apiKey = process.env.API_KEY;
if (!baseUrl || !apiKey) throw new Error('set BASE_URL and API_KEY');
const outcome = await runAllKinds(baseUrl, apiKey, (s) => process.stderr.write(`${s}\n`));
process.stdout.write(`${JSON.stringify(outcome)}\n`);
