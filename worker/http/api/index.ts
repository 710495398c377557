/** The HTTP API (`compactor api`): the Hono app to serve or mount, and the server around it. */

export { type ApiErrorBody, type ApiErrorType, ERROR_TYPES } from '../errors.ts';
export { type ApiDeps, type ApiEnv, type ApiOptions, createApiApp } from './app.ts';
export { type ApiOffload, apiOffload } from './offload.ts';
export { API_VERSION, openApiDocument } from './openapi.ts';
export { API_ROUTES, OPENAPI_PATH } from './routes.ts';
export { type ApiServer, startApi } from './server.ts';
