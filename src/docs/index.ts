export { openApiRoutes as docsRoutesFor } from './routes.js';
