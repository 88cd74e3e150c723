import 'reflect-metadata';
import { runServiceMain } from '@crm/runtime';
import { eventsApp } from './events.app';

runServiceMain('events', () => eventsApp);
