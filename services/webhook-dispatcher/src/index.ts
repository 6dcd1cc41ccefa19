export { startDispatcher, type Dispatcher, type DispatcherDeps, type DispatcherSettings } from './dispatcher.ts';
export { DURABLE_NAME } from './intake/event-intake.ts';
