import { AppError } from '../errors/index.js';

/** The dashboard's own answers (everything else it shows comes from the API it calls). */
export const DashboardErrorCodes = {
  ASSET_NOT_FOUND: 'DASHBOARD_ASSET_NOT_FOUND',
  NOT_BUILT: 'DASHBOARD_NOT_BUILT',
} as const;

export const dashboardErrors = {
  /** A missing file under /dashboard/assets/ (or any path with an extension) is a 404, never the index page. */
  assetNotFound: (path: string) =>
    new AppError(DashboardErrorCodes.ASSET_NOT_FOUND, 404, `No dashboard file at ${path}.`),
  notBuilt: () =>
    new AppError(
      DashboardErrorCodes.NOT_BUILT,
      503,
      'The dashboard is not built on this server: run `npm run build:dashboard` (npm start does it).',
    ),
};
