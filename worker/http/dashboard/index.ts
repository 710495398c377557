/** `compactor dashboard`: Bull Board, the ledger API and the session pages (see server.ts). */
export { DashboardConfigError } from './auth.ts';
export { createDashboardApp, type Dashboard, type DashboardDeps, startDashboard } from './server.ts';
