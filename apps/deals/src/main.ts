import 'reflect-metadata';
import { runServiceMain } from '@crm/runtime';
import { dealsApp } from './deals.app';

runServiceMain('deals', () => dealsApp);
