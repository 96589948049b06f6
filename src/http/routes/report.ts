/** Spec 4.2: `GET /report`, the diagnostics archive, and its download. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Type from 'typebox';
import type { Diagnostics } from '../../domain/diagnostics/report.js';
import { NotFoundError } from '../../domain/errors.js';
import { ErrorBody } from '../errors.js';
import { Reply, route, type AnyRoute } from '../route.js';

const ReportResponse = Type.Object({
  status: Type.String({ description: '"generated"' }),
  tar_filename: Type.String(),
  report_path: Type.String({ description: 'Path of the archive on the box' }),
  report: Type.String({ default: 'generated', deprecated: true, description: 'Deprecated: use status' }),
});

/** The report routes. */
export function reportRoutes(diagnostics: Diagnostics): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/report', tag: 'System', permission: 'system:report',
      summary: 'Create a diagnostics archive on the box (versions, configuration without secrets, store statistics, events, recent log lines, site)',
      responses: { 200: ReportResponse },
      handler: async () => {
        const { tarFilename, reportPath } = await diagnostics.create();
        return { status: 'generated', tar_filename: tarFilename, report_path: reportPath, report: 'generated' };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/report/{tar_filename}', tag: 'System', permission: 'system:report',
      summary: 'Download a diagnostics archive (beyond the spec: for boxes without shell access)',
      params: Type.Object({ tar_filename: Type.String({ pattern: '^report-[0-9TZ]+\\.tar\\.gz$', maxLength: 64 }) }),
      responses: { 200: { description: 'The archive', contentType: 'application/gzip' }, 404: ErrorBody },
      handler: ({ params }) => {
        const file = path.join(diagnostics.dir, params.tar_filename);
        if (!existsSync(file)) throw new NotFoundError(`no report ${params.tar_filename}; reports are pruned to the newest 10`);
        return new Reply(readFileSync(file), 'application/gzip', 200, { 'content-disposition': `attachment; filename="${params.tar_filename}"` });
      },
    }),
  ];
}
