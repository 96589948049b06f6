/**
 * How a command ends: the exit statuses scripts test, and the error that carries one. Kept
 * apart from the commands so that `--help`, `--version` and usage errors load nothing else.
 */

/** sysexits(3) and the status codes of `status` (those of LSB init scripts). */
export const EXIT = { ok: 0, failure: 1, notRunning: 3, unknown: 4, usage: 64, dataError: 65, noInput: 66, software: 70, cannotCreate: 73, tempFail: 75, config: 78 } as const;

/** A subcommand that cannot do its job: the message for stderr and the exit status. */
export class CliError extends Error {
  constructor(message: string, readonly exit: number) {
    super(message);
    this.name = 'CliError';
  }
}
