/** Overview: the owner's day across assistants, and the call log of every assistant. */
export { overviewRoutes } from './routes.js';
